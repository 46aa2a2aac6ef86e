// redlock 5 ships typings that its package.json "exports" hides from NodeNext resolution;
// this declares the part of its API the project uses.
declare module "redlock" {
  import type { Cluster, Redis } from "ioredis";

  export interface Lock {
    readonly resources: string[];
    readonly expiration: number;
    release(): Promise<unknown>;
    extend(duration: number): Promise<Lock>;
  }

  export interface RedlockSettings {
    driftFactor?: number;
    retryCount?: number;
    retryDelay?: number;
    retryJitter?: number;
    automaticExtensionThreshold?: number;
  }

  export default class Redlock {
    constructor(clients: Iterable<Redis | Cluster>, settings?: RedlockSettings);
    acquire(resources: string[], duration: number, settings?: RedlockSettings): Promise<Lock>;
    /** Runs `routine` under the lock, extending it while the routine runs; releases after. */
    using<T>(resources: string[], duration: number, routine: () => Promise<T>): Promise<T>;
    quit(): Promise<void>;
  }
}
