// A raw SSE reader for the front door's tests: the response as it arrives, split into blocks,
// each either a comment or an event whose `data` is JSON (what the SDKs parse, ADR 0037).
export interface SseBlock {
  raw: string;
  comment: boolean;
  event?: { event_id: string; type: string } & Record<string, unknown>;
}

export interface RawSse {
  response: Response;
  /** The next block, waiting for it. */
  next(): Promise<SseBlock | undefined>;
  /** Blocks up to and including the first event `until` accepts. */
  readUntil(until: (event: NonNullable<SseBlock["event"]>) => boolean): Promise<SseBlock[]>;
  close(): void;
}

/** A GET of `url`, or a POST of `body` as JSON (a streaming create). */
export async function openSse(
  url: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<RawSse> {
  const abort = new AbortController();
  const response = await fetch(url, {
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    signal: abort.signal,
    ...(body !== undefined && { method: "POST", body: JSON.stringify(body) }),
  });
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const next = async (): Promise<SseBlock | undefined> => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const raw = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return parseBlock(raw);
      }
      const chunk = await reader?.read();
      if (!chunk || chunk.done) return undefined;
      buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  return {
    response,
    next,
    async readUntil(until) {
      const blocks: SseBlock[] = [];
      for (let block = await next(); block; block = await next()) {
        blocks.push(block);
        if (block.event && until(block.event)) return blocks;
      }
      throw new Error(`stream ended after ${blocks.length} blocks`);
    },
    close: () => abort.abort(),
  };
}

function parseBlock(raw: string): SseBlock {
  if (raw.split("\n").every((line) => line.startsWith(":"))) return { raw, comment: true };
  const data = raw
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice(6))
    .join("\n");
  return { raw, comment: false, event: JSON.parse(data) as SseBlock["event"] };
}

export const eventsOf = (blocks: SseBlock[]) =>
  blocks.flatMap((block) => (block.event ? [block.event] : []));
