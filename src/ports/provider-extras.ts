// What a provider wrapper (model-call metrics, traces, quota charging) passes through besides
// `call`: the default model and the provider's own compaction. A wrapper that dropped them would
// silently turn mode native into summarize and leave compaction items without their model.
import type { ModelProvider, NativeCompaction } from "./model-provider.js";

export type ProviderExtras = Pick<ModelProvider, "defaultModel" | "nativeCompaction">;

/** `provider`'s extras, its native compaction replaced by `native` when given. */
export function providerExtras(
  provider: ModelProvider,
  native: NativeCompaction | undefined = provider.nativeCompaction,
): ProviderExtras {
  return {
    ...(provider.defaultModel !== undefined && { defaultModel: provider.defaultModel }),
    ...(native !== undefined && { nativeCompaction: native }),
  };
}
