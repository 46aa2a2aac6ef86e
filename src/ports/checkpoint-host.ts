// The engine's view of its host at safe boundaries: input that may enter the running turn.
import type { InputItem } from "../domain/conversation.js";
import type { TurnCheckpoint } from "../domain/inputs.js";
import type { AdmissionSource } from "../domain/turn-events.js";

export interface CheckpointRequest {
  turnId: string;
  /** `after_work`: tool results are in, the next model call has not started. */
  checkpoint: TurnCheckpoint;
  /** Model calls made so far in this turn. */
  iteration: number;
  signal: AbortSignal;
}

/** One admitted steer or unit of earliest-safe-boundary work, appended as one user message. */
export interface CheckpointAdmission {
  source: AdmissionSource;
  items: InputItem[];
}

export interface TurnCheckpointHost {
  /** Claims what is admissible at this checkpoint; an empty list when nothing is. */
  checkpoint(request: CheckpointRequest): Promise<readonly CheckpointAdmission[]>;
}
