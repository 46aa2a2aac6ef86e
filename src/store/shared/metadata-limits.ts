// The per-session metadata limits (ADR 0029) as every backend applies them in a commit's step:
// the metadata after the patch, and every patch the session keeps as its history, in bytes
// (keys plus values, UTF-8: what Lua's `#` counts).
import type { TetherError } from "../../domain/errors.js";
import { tenantOfSession } from "../../domain/quotas.js";
import type { RuntimeCommit } from "../../domain/session.js";
import {
  metadataBytes,
  storageQuotaExhausted,
  type StorageLimitName,
} from "../../domain/storage-quotas.js";

/** The limit a commit passes, or undefined; `loggedBytes` is what the history holds already. */
export function metadataOverLimit(
  metadata: Readonly<Record<string, string>>,
  loggedBytes: number,
  commit: RuntimeCommit,
): "session_metadata_bytes" | "metadata_history_bytes" | undefined {
  const patch = commit.metadataPatch ?? {};
  const limits = commit.metadataLimits;
  if (!limits || Object.keys(patch).length === 0) return undefined;
  if (loggedBytes + metadataBytes(patch) > limits.maxHistoryBytes) return "metadata_history_bytes";
  const after = { ...metadata };
  for (const [key, value] of Object.entries(patch)) {
    if (value === "") delete after[key];
    else after[key] = value;
  }
  return metadataBytes(after) > limits.maxBytes ? "session_metadata_bytes" : undefined;
}

export function metadataRefusal(commit: RuntimeCommit, limit: string): TetherError {
  const limits = commit.metadataLimits;
  const name = limit as StorageLimitName;
  const max = name === "session_metadata_bytes" ? limits?.maxBytes : limits?.maxHistoryBytes;
  return storageQuotaExhausted(tenantOfSession(commit.sessionId), name, max ?? 0);
}
