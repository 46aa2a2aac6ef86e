// Abort plumbing without timers: one listener per turn settles every race against cancellation,
// and child controllers tie a tool call's signal to the turn's with a listener that is removed.

export const ABORTED: unique symbol = Symbol("aborted");
export type Aborted = typeof ABORTED;

/** The turn's cancellation, observed through a single lazily attached listener. */
export class TurnCancellation {
  private abortedPromise: Promise<Aborted> | undefined;
  private listener: (() => void) | undefined;

  constructor(readonly signal: AbortSignal) {}

  get aborted(): boolean {
    return this.signal.aborted;
  }

  /** The promise's value, or ABORTED as soon as the turn is cancelled, whichever is first. */
  race<T>(promise: Promise<T>): Promise<T | Aborted> {
    if (this.signal.aborted) {
      promise.catch(ignore);
      return Promise.resolve(ABORTED);
    }
    this.abortedPromise ??= new Promise<Aborted>((resolve) => {
      this.listener = () => resolve(ABORTED);
      this.signal.addEventListener("abort", this.listener, { once: true });
    });
    return Promise.race([promise, this.abortedPromise]);
  }

  dispose(): void {
    if (this.listener !== undefined) this.signal.removeEventListener("abort", this.listener);
    this.listener = undefined;
  }
}

/** A controller that aborts when `parent` does; `dispose` detaches it from the parent. */
export class ChildController extends AbortController {
  private readonly onParentAbort: (() => void) | undefined;

  constructor(private readonly parent: AbortSignal) {
    super();
    if (parent.aborted) {
      this.abort(parent.reason);
      return;
    }
    this.onParentAbort = () => this.abort(parent.reason);
    parent.addEventListener("abort", this.onParentAbort, { once: true });
  }

  dispose(): void {
    if (this.onParentAbort !== undefined) {
      this.parent.removeEventListener("abort", this.onParentAbort);
    }
  }
}

function ignore(): void {}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
