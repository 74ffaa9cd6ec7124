import { defineWarnings } from '../../src/kit/index.js';

/** Warning codes of the Play 1.x buildpack (documented in docs/errors.md). */
export const Play1Warnings = defineWarnings({
  PLAY1_XFORWARDED_SUPPORT: {
    title: "request.secure will be false behind the service's HTTPS",
    fix: 'Add XForwardedSupport=all (or %platform.XForwardedSupport=all) to conf/application.conf.',
  },
  PLAY1_UNDEFINED_REFERENCE: {
    title: 'application.conf refers to a variable that is not defined',
    fix: 'Define the variable on the application (or link the add-on that provides it), or remove the reference.',
  },
  PLAY1_DEV_MODE: {
    title: 'application.mode=dev opens a JPDA debugger port',
    fix: 'Add %platform.application.mode=prod to conf/application.conf.',
  },
  PLAY1_JAVA_UNTESTED: {
    title: "The host's Java is outside the range the Play release was made for",
    fix: 'Choose a Play series made for this Java (PLAY1_VERSION), or give the host a Java in the range shown (JAVA_HOME).',
  },
  PLAY1_DOLLAR_IN_VALUE: {
    title: 'A variable that application.conf refers to holds a $, which Play misreads',
    fix: "Remove the $ from the variable's value (e.g. encode it, or move it into a file), or read the variable in code with System.getenv instead of ${…} in application.conf.",
  },
});
