import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the receiver decoded it from an OTLP request (JSON or protobuf): ids in hex. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
}

export interface OtlpRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Parsed when the request was OTLP/JSON. */
  json?: any;
  spans: ReceivedSpan[];
}

/** How the receiver answers: accept (200), fail (500), or hang (never answer until the client goes away). */
export type ReceiverMode = 'ok' | 'fail' | 'hang';

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the base URL (`--otlp`); spans are posted to `<url>/v1/traces`. */
  url: string;
  requests: OtlpRequest[];
  mode: ReceiverMode;
  /** Every span received so far. */
  spans(): ReceivedSpan[];
  /** Resolves once a span matching `match` has arrived. */
  waitFor(match: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan>;
  close(): Promise<void>;
}

/** Read one protobuf varint at `offset`; returns the value and the next offset. */
const varint = (bytes: Buffer, offset: number): [number, number] => {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[offset++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [value, offset];
    shift += 7;
  }
};

/** The fields of one protobuf message: field number → raw values (length-delimited ones as buffers). */
const fieldsOf = (bytes: Buffer): Map<number, Array<Buffer | number>> => {
  const fields = new Map<number, Array<Buffer | number>>();
  let offset = 0;
  while (offset < bytes.length) {
    const [key, next] = varint(bytes, offset);
    offset = next;
    const field = Math.floor(key / 8);
    const wire = key % 8;
    let value: Buffer | number;
    if (wire === 0) [value, offset] = varint(bytes, offset);
    else if (wire === 1) (value = bytes.readDoubleLE(offset)), (offset += 8);
    else if (wire === 5) (value = bytes.readUInt32LE(offset)), (offset += 4);
    else if (wire === 2) {
      const [length, start] = varint(bytes, offset);
      value = bytes.subarray(start, start + length);
      offset = start + length;
    } else throw new Error(`unexpected protobuf wire type ${wire}`);
    fields.set(field, [...(fields.get(field) ?? []), value]);
  }
  return fields;
};

const messages = (fields: Map<number, Array<Buffer | number>>, field: number): Buffer[] => (fields.get(field) ?? []).filter((value): value is Buffer => Buffer.isBuffer(value));

/** Decode the spans of an OTLP `ExportTraceServiceRequest` in protobuf (resource_spans → scope_spans → spans). */
export const protobufSpans = (body: Buffer): ReceivedSpan[] =>
  messages(fieldsOf(body), 1).flatMap((resourceSpans) =>
    messages(fieldsOf(resourceSpans), 2).flatMap((scopeSpans) =>
      messages(fieldsOf(scopeSpans), 2).map((raw) => {
        const span = fieldsOf(raw);
        const hex = (field: number) => messages(span, field)[0]?.toString('hex') ?? '';
        return { traceId: hex(1), spanId: hex(2), parentSpanId: hex(4), name: messages(span, 5)[0]?.toString('utf8') ?? '' };
      }),
    ),
  );

/** The spans of an OTLP/JSON request body. */
export const jsonSpans = (json: any): ReceivedSpan[] =>
  (json?.resourceSpans ?? []).flatMap((resourceSpans: any) =>
    (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans: any) =>
      (scopeSpans.spans ?? []).map((span: any) => ({ traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name })),
    ),
  );

/** Start an OTLP/HTTP trace receiver on 127.0.0.1 (a free port) that decodes what it is sent. */
export const startOtlpReceiver = async (mode: ReceiverMode = 'ok'): Promise<OtlpReceiver> => {
  const requests: OtlpRequest[] = [];
  const waiters: Array<() => void> = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const isJson = String(request.headers['content-type'] ?? '').includes('json');
      const json = isJson ? JSON.parse(body.toString('utf8')) : undefined;
      requests.push({ path: request.url ?? '/', headers: request.headers, body, ...(isJson ? { json } : {}), spans: isJson ? jsonSpans(json) : protobufSpans(body) });
      for (const wake of waiters.splice(0)) wake();
      if (receiver.mode === 'hang') {
        hanging.add(response);
        return;
      }
      response.writeHead(receiver.mode === 'fail' ? 500 : 200, { 'content-type': isJson ? 'application/json' : 'application/x-protobuf' });
      response.end(isJson ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const spans = () => requests.flatMap((request) => request.spans);
  const receiver: OtlpReceiver = {
    url: `http://127.0.0.1:${port}`,
    requests,
    mode,
    spans,
    waitFor: async (match) => {
      for (;;) {
        const found = spans().find(match);
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
};
