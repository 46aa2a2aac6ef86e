// HTTP/2 written by hand over a plain socket, for tests that must do what a well-behaved client
// library never would: open streams past the peer's limit, reset them at once, stop mid-preface.
import * as net from "node:net";

export const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export const FrameType = { HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, GOAWAY: 7 } as const;
export const REFUSED_STREAM = 7;

export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

export function frame(type: number, flags: number, streamId: number, payload = Buffer.alloc(0)) {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

function literal(nameIndex: number, value: string): Buffer {
  // "Literal header field without indexing, indexed name" (RFC 7541 6.2.2), no Huffman coding.
  const v = Buffer.from(value, "latin1");
  if (v.length > 126) throw new Error("value too long for this encoder");
  const name = nameIndex < 15 ? [nameIndex] : [15, nameIndex - 15];
  return Buffer.concat([Buffer.from(name), Buffer.from([v.length]), v]);
}

/** A gRPC request's HEADERS frame (END_HEADERS; END_STREAM only when `end`). */
export function grpcHeaders(streamId: number, path: string, end = false): Buffer {
  const block = Buffer.concat([
    Buffer.from([0x83, 0x86]), // :method POST, :scheme http (static table 3 and 6)
    literal(4, path), // :path
    literal(1, "localhost"), // :authority
    literal(31, "application/grpc"), // content-type
    Buffer.from([0x00, 2]),
    Buffer.from("te", "latin1"),
    Buffer.from([8]),
    Buffer.from("trailers", "latin1"),
  ]);
  return frame(FrameType.HEADERS, 0x4 | (end ? 0x1 : 0), streamId, block);
}

export function rstStream(streamId: number, code = 8 /* CANCEL */): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code, 0);
  return frame(FrameType.RST_STREAM, 0, streamId, payload);
}

/** A raw HTTP/2 connection: what the server sent, frame by frame, and when it closed. */
export interface RawH2 {
  socket: net.Socket;
  frames: Frame[];
  closed: Promise<void>;
}

export async function connectRawH2(port: number, opening = true): Promise<RawH2> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const frames: Frame[] = [];
  let buffered = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      frames.push({
        type: buffered.readUInt8(3),
        flags: buffered.readUInt8(4),
        streamId: buffered.readUInt32BE(5) & 0x7fffffff,
        payload: buffered.subarray(9, 9 + length),
      });
      buffered = buffered.subarray(9 + length);
    }
  });
  socket.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  if (opening) socket.write(Buffer.concat([H2_PREFACE, frame(FrameType.SETTINGS, 0, 0)]));
  return { socket, frames, closed };
}

/** Resolves true when the socket closes within `ms`, false otherwise. */
export function closesWithin(closed: Promise<void>, ms: number): Promise<boolean> {
  return Promise.race([
    closed.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);
}
