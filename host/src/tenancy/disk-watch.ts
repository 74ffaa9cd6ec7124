import { basename } from 'node:path';
import { AppDisk, diskFullLine, diskIsFull, diskUsage } from 'runplan';

/** How often the applications' disks are read: statfs(2) of each, a few microseconds. */
const EVERY_MS = 2_000;

/**
 * Says in an application's log when its own disk has become full (the coded
 * RUNPLAN_W_RUN_DISK_LIMIT line), once, and again only after it had room. An
 * application that gets ENOSPC often goes on running: no exit tells of it.
 */
export class DiskWatch {
  private readonly full = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly disksDir: string,
    private readonly megabytes: number,
    private readonly say: (appId: string, line: string) => void,
  ) {}

  start(everyMs = EVERY_MS): void {
    const tick = () => {
      this.timer = undefined;
      void this.check()
        .catch(() => undefined)
        .finally(() => {
          if (this.running) this.timer = setTimeout(tick, everyMs).unref();
        });
    };
    this.running = true;
    this.timer = setTimeout(tick, everyMs).unref();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One reading of every mounted disk. */
  async check(): Promise<void> {
    // One reading of the loop devices for every disk: this runs every 2 s, with one image per application.
    for (const [image, point] of await AppDisk.mountedIn(this.disksDir)) {
      const name = basename(image);
      if (!name.endsWith('.ext4')) continue;
      const appId = name.slice(0, -'.ext4'.length);
      const usage = await diskUsage(point);
      if (diskIsFull(usage)) {
        if (!this.full.has(appId)) this.say(appId, diskFullLine(this.megabytes));
        this.full.add(appId);
      } else if (usage.freeBytes > usage.sizeBytes / 20) {
        // Room again (5 %): the next time it fills up is said again.
        this.full.delete(appId);
      }
    }
  }
}
