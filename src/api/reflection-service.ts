// gRPC server reflection (v1 and v1alpha, so both old and new grpcurl work) built from the
// generated descriptors: the files of the registered services and everything they import, and
// the files of messages no service imports but clients must decode (error details).
// Descriptors are serialized once, at construction; each answer is a lookup.
import {
  create,
  toBinary,
  type DescFile,
  type DescMessage,
  type DescService,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import * as v1 from "../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../gen/grpc/reflection/v1alpha/reflection_pb.js";

/** What both protocol versions ask, in a version-neutral form. */
type Question = v1.ServerReflectionRequest["messageRequest"];
type Answer = MessageInitShape<typeof v1.ServerReflectionResponseSchema>["messageResponse"];

interface ReflectionIndex {
  services: string[];
  byFile: Map<string, DescFile>;
  bySymbol: Map<string, DescFile>;
  bytes: Map<DescFile, Uint8Array>;
}

function indexMessages(messages: readonly DescMessage[], file: DescFile, index: ReflectionIndex) {
  for (const message of messages) {
    index.bySymbol.set(message.typeName, file);
    for (const e of message.nestedEnums) index.bySymbol.set(e.typeName, file);
    for (const x of message.nestedExtensions) index.bySymbol.set(x.typeName, file);
    indexMessages(message.nestedMessages, file, index);
  }
}

function indexFile(file: DescFile, index: ReflectionIndex): void {
  const name = file.proto.name;
  if (index.byFile.has(name)) return;
  index.byFile.set(name, file);
  index.bytes.set(file, toBinary(FileDescriptorProtoSchema, file.proto));
  if (file.proto.package) index.bySymbol.set(file.proto.package, file);
  for (const service of file.services) {
    index.bySymbol.set(service.typeName, file);
    for (const method of service.methods) {
      index.bySymbol.set(`${service.typeName}.${method.name}`, file);
    }
  }
  for (const e of file.enums) index.bySymbol.set(e.typeName, file);
  for (const x of file.extensions) index.bySymbol.set(x.typeName, file);
  indexMessages(file.messages, file, index);
  for (const dep of file.dependencies) indexFile(dep, index);
}

/** The file first, then every file it imports transitively, each once. */
function withDependencies(file: DescFile, index: ReflectionIndex): Uint8Array[] {
  const seen = new Set<DescFile>();
  const out: Uint8Array[] = [];
  const visit = (f: DescFile) => {
    if (seen.has(f)) return;
    seen.add(f);
    out.push(index.bytes.get(f) ?? toBinary(FileDescriptorProtoSchema, f.proto));
    f.dependencies.forEach(visit);
  };
  visit(file);
  return out;
}

function notFound(message: string): Answer {
  return { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: message } };
}

function extensionsOf(typeName: string, index: ReflectionIndex) {
  const found: { number: number; file: DescFile }[] = [];
  for (const file of index.byFile.values()) {
    const walk = (exts: DescFile["extensions"]) => {
      for (const x of exts)
        if (x.extendee.typeName === typeName) found.push({ number: x.number, file });
    };
    walk(file.extensions);
    const nested = (messages: readonly DescMessage[]) => {
      for (const m of messages) {
        walk(m.nestedExtensions);
        nested(m.nestedMessages);
      }
    };
    nested(file.messages);
  }
  return found;
}

function answer(question: Question, index: ReflectionIndex): Answer {
  switch (question.case) {
    case "listServices":
      return {
        case: "listServicesResponse",
        value: { service: index.services.map((name) => ({ name })) },
      };
    case "fileByFilename": {
      const file = index.byFile.get(question.value);
      if (!file) return notFound(`file ${question.value} not found`);
      return {
        case: "fileDescriptorResponse",
        value: { fileDescriptorProto: withDependencies(file, index) },
      };
    }
    case "fileContainingSymbol": {
      const file = index.bySymbol.get(question.value);
      if (!file) return notFound(`symbol ${question.value} not found`);
      return {
        case: "fileDescriptorResponse",
        value: { fileDescriptorProto: withDependencies(file, index) },
      };
    }
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = question.value;
      const hit = extensionsOf(containingType, index).find((x) => x.number === extensionNumber);
      if (!hit) return notFound(`extension ${containingType}(${extensionNumber}) not found`);
      return {
        case: "fileDescriptorResponse",
        value: { fileDescriptorProto: withDependencies(hit.file, index) },
      };
    }
    case "allExtensionNumbersOfType": {
      if (!index.bySymbol.has(question.value)) return notFound(`type ${question.value} not found`);
      return {
        case: "allExtensionNumbersResponse",
        value: {
          baseTypeName: question.value,
          extensionNumber: extensionsOf(question.value, index).map((x) => x.number),
        },
      };
    }
    default:
      return {
        case: "errorResponse",
        value: { errorCode: Code.InvalidArgument, errorMessage: "no message_request was set" },
      };
  }
}

export interface ReflectionServices {
  v1: ServiceImpl<typeof v1.ServerReflection>;
  v1alpha: ServiceImpl<typeof v1alpha.ServerReflection>;
}

/**
 * `services` are the services to advertise; reflection advertises itself too. `messages` are
 * further types to resolve (by symbol or file) that no advertised service imports.
 */
export function createReflectionServices(
  services: readonly DescService[],
  messages: readonly DescMessage[] = [],
): ReflectionServices {
  const index: ReflectionIndex = {
    services: [],
    byFile: new Map(),
    bySymbol: new Map(),
    bytes: new Map(),
  };
  const all = [...services, v1.ServerReflection, v1alpha.ServerReflection];
  index.services = [...new Set(all.map((s) => s.typeName))].sort();
  for (const service of all) indexFile(service.file, index);
  for (const message of messages) indexFile(message.file, index);

  return {
    v1: {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) {
          yield create(v1.ServerReflectionResponseSchema, {
            validHost: request.host,
            originalRequest: request,
            messageResponse: answer(request.messageRequest, index),
          });
        }
      },
    },
    v1alpha: {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) {
          // The two versions share field numbers and shapes; only the package differs.
          yield create(v1alpha.ServerReflectionResponseSchema, {
            validHost: request.host,
            originalRequest: request,
            messageResponse: answer(request.messageRequest as Question, index) as MessageInitShape<
              typeof v1alpha.ServerReflectionResponseSchema
            >["messageResponse"],
          });
        }
      },
    },
  };
}
