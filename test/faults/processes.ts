// Every process the fault suite starts, so that a run cut short by its watchdog leaves none behind.
import type { ChildProcess } from "node:child_process";

const children = new Set<ChildProcess>();

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** SIGCONT (a paused process cannot die otherwise) then SIGKILL to each tracked process. */
export function killAll(): void {
  for (const child of children) {
    child.kill("SIGCONT");
    child.kill("SIGKILL");
  }
}
