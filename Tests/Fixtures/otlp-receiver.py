#!/usr/bin/env python3
"""An OpenTelemetry collector for the tests of swift-web-image's OpenTelemetry export: it speaks
the real protocol (OTLP/HTTP, and OTLP/gRPC when asked), decodes with the `opentelemetry-proto`
package from PyPI (scripts/deps.sh --test installs it, and grpcio), and prints what it receives as
JSON lines. The tests start it, read its stdout line by line, and point the proxy's exporter at
the address of the first line (or, for gRPC, of the second).

    otlp-receiver.py [--port N] [--grpc-port M]
        --port N         OTLP/HTTP on 127.0.0.1:N (default 0: the OS picks a port)
        --grpc-port M    OTLP/gRPC as well, on 127.0.0.1:M (0: the OS picks a port); needs grpcio

Lines on stdout, one JSON object a line, flushed as they are written:

    listening on http://127.0.0.1:PORT          (plain text, first and once)
    grpc on 127.0.0.1:PORT                      (plain text, second and once; only with --grpc-port)
    {"span": {"trace_id": "<32 hex>", "span_id": "<16 hex>", "parent_span_id": "<16 hex or "">",
              "name": "...", "kind": "SPAN_KIND_SERVER", "service": "<service.name or "">",
              "attributes": {"key": value, ...}, "status": "STATUS_CODE_UNSET",
              "start_ns": INT, "end_ns": INT}}    one a span, in the order of the request
    {"metrics": N}                               one a request to /v1/metrics (or a gRPC
                                                 MetricsService/Export): N data points
    {"logs": N}                                  one a request to /v1/logs (or a gRPC
                                                 LogsService/Export): N log records
    {"error": "..."}                             a request refused with 400 or 415
    {"mark": "NAME"}                             a GET /mark?NAME: every line before it is in

Endpoints: POST /v1/traces, /v1/metrics and /v1/logs, with a protobuf body
(`Content-Type: application/x-protobuf`) or an OTLP/JSON one (`application/json`, whose trace and
span ids are hex strings, as the specification says), optionally `Content-Encoding: gzip`. The
answer is the empty Export*ServiceResponse in the request's own encoding, 200. A body that does
not decode: 400; another content type or encoding: 415; anything else: 404. The lines are written
before the answer is sent, so a client that has its 200 will find them on stdout.
GET /mark?NAME prints a mark line: the way a test knows it has read all the lines before it.

With --grpc-port, OTLP/gRPC as well (insecure, loopback only, with grpcio from PyPI, imported only
then: without it, exit status 2): the Export of TraceService, MetricsService and LogsService, gzip
compressed or not (grpcio decompresses), prints exactly the lines the HTTP endpoint prints for
the same data, from the same functions, and answers the empty Export*ServiceResponse once they
are written. A message that does not decode is grpcio's to refuse (INTERNAL, no line). The mark
stays on HTTP: GET /mark?NAME after a finished gRPC export works the same way.

Attribute values are flattened: strings, ints, doubles and bools to JSON scalars, arrays to lists,
key-value lists to objects, bytes to base64 strings. SIGTERM and SIGINT stop it (exit status 0).
"""
import argparse
import base64
import gzip
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    from opentelemetry.proto.trace.v1 import trace_pb2
except ImportError as error:
    print(f"otlp-receiver: {error} (python3 -m pip install opentelemetry-proto)", file=sys.stderr)
    sys.exit(3)

_output_lock = threading.Lock()


def emit(obj):
    """One line on stdout, whole and flushed, whichever request thread writes it."""
    line = obj if isinstance(obj, str) else json.dumps(obj)
    with _output_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def any_value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    if kind is None:
        return None
    return getattr(value, kind)


def attributes(key_values):
    return {kv.key: any_value(kv.value) for kv in key_values}


def handle_traces(request):
    for resource_spans in request.resource_spans:
        service = attributes(resource_spans.resource.attributes).get("service.name", "")
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                emit({"span": {
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": trace_pb2.Span.SpanKind.Name(span.kind),
                    "service": service if isinstance(service, str) else str(service),
                    "attributes": attributes(span.attributes),
                    "status": trace_pb2.Status.StatusCode.Name(span.status.code),
                    "start_ns": span.start_time_unix_nano,
                    "end_ns": span.end_time_unix_nano,
                }})


def handle_metrics(request):
    count = 0
    for resource_metrics in request.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                data = metric.WhichOneof("data")
                if data is not None:
                    count += len(getattr(metric, data).data_points)
    emit({"metrics": count})


def handle_logs(request):
    count = sum(len(scope_logs.log_records)
                for resource_logs in request.resource_logs
                for scope_logs in resource_logs.scope_logs)
    emit({"logs": count})


ENDPOINTS = {
    "/v1/traces": (trace_service_pb2.ExportTraceServiceRequest,
                   trace_service_pb2.ExportTraceServiceResponse, handle_traces),
    "/v1/metrics": (metrics_service_pb2.ExportMetricsServiceRequest,
                    metrics_service_pb2.ExportMetricsServiceResponse, handle_metrics),
    "/v1/logs": (logs_service_pb2.ExportLogsServiceRequest,
                 logs_service_pb2.ExportLogsServiceResponse, handle_logs),
}

# OTLP/JSON writes these ids as hex; protobuf's JSON mapping reads bytes as base64.
_HEX_ID_KEYS = {"traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"}


def hex_ids_to_base64(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _HEX_ID_KEYS and isinstance(value, str):
                node[key] = base64.b64encode(bytes.fromhex(value)).decode("ascii")
            else:
                hex_ids_to_base64(value)
    elif isinstance(node, list):
        for item in node:
            hex_ids_to_base64(item)


class BadRequest(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as exporters expect; every answer has a length

    def log_message(self, format, *args):
        pass  # stdout is for the tests; stderr stays quiet

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            body = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(body)
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def answer(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def not_found(self):
        self.read_body()  # drained, so that the connection can carry the next request
        self.answer(404, "text/plain", b"not found\n")

    do_PUT = do_DELETE = do_PATCH = do_HEAD = not_found

    def do_GET(self):
        # GET /mark?NAME prints {"mark": "NAME"}: a test that has seen its exporter finish asks
        # for a mark, and once the mark is on stdout, so is every line received before it.
        path, _, query = self.path.partition("?")
        if path != "/mark":
            return self.not_found()
        emit({"mark": query})
        self.answer(200, "text/plain", b"ok\n")

    def do_POST(self):
        endpoint = ENDPOINTS.get(self.path.split("?")[0])
        if endpoint is None:
            return self.not_found()
        request_type, response_type, handle = endpoint
        body = self.read_body()
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        try:
            encoding = self.headers.get("Content-Encoding", "identity").strip().lower()
            if encoding == "gzip":
                try:
                    body = gzip.decompress(body)
                except (OSError, EOFError) as error:
                    raise BadRequest(400, f"gzip: {error}")
            elif encoding != "identity":
                raise BadRequest(415, f"unsupported Content-Encoding {encoding!r}")
            request = request_type()
            if content_type == "application/x-protobuf":
                try:
                    request.ParseFromString(body)
                except DecodeError as error:
                    raise BadRequest(400, f"protobuf: {error}")
            elif content_type == "application/json":
                try:
                    document = json.loads(body)
                    if not isinstance(document, dict):
                        raise ValueError(f"a JSON {type(document).__name__}, not an object")
                    hex_ids_to_base64(document)
                    json_format.ParseDict(document, request, ignore_unknown_fields=True)
                except (ValueError, json_format.ParseError) as error:
                    raise BadRequest(400, f"json: {error}")
            else:
                raise BadRequest(415, f"unsupported Content-Type {content_type!r}")
        except BadRequest as error:
            emit({"error": f"{self.path}: {error}"})
            return self.answer(error.status, "text/plain", f"{error}\n".encode())
        handle(request)
        if content_type == "application/json":
            self.answer(200, "application/json", json_format.MessageToJson(response_type()).encode())
        else:
            self.answer(200, "application/x-protobuf", response_type().SerializeToString())


class Exporter:
    """The Export method of a gRPC service: the HTTP endpoint's handler, then the empty answer."""

    def __init__(self, response_type, handle):
        self.response_type = response_type
        self.handle = handle

    def Export(self, request, context):
        self.handle(request)
        return self.response_type()


def grpc_server(port):
    """An OTLP/gRPC server on 127.0.0.1:port, started, and its port; or exit 2 without grpcio."""
    try:
        import grpc
        from concurrent.futures import ThreadPoolExecutor
        from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
    except ImportError as error:
        print(f"otlp-receiver: --grpc-port: {error} (python3 -m pip install grpcio)",
              file=sys.stderr)
        sys.exit(2)
    server = grpc.server(ThreadPoolExecutor(max_workers=8), options=[
        ("grpc.so_reuseport", 0),  # a port in use is an error, as it is for the HTTP side
        ("grpc.max_receive_message_length", -1),  # no limit, as on the HTTP side
    ])
    # Each service's Export is the HTTP endpoint of the same signal: its types and its handler.
    services = {
        "/v1/traces": trace_service_pb2_grpc.add_TraceServiceServicer_to_server,
        "/v1/metrics": metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server,
        "/v1/logs": logs_service_pb2_grpc.add_LogsServiceServicer_to_server,
    }
    for path, add_servicer in services.items():
        _, response_type, handle = ENDPOINTS[path]  # grpcio decodes the request type itself
        add_servicer(Exporter(response_type, handle), server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    return server, bound


def main():
    parser = argparse.ArgumentParser(
        description="OTLP/HTTP (and OTLP/gRPC) receiver for the tests (see the docstring)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: any free one)")
    parser.add_argument("--grpc-port", type=int, default=None,
                        help="serve OTLP/gRPC as well, on this port of 127.0.0.1 (0: any free one)")
    arguments = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), Handler)
    server.daemon_threads = True
    grpc_receiver = None
    if arguments.grpc_port is not None:
        grpc_receiver, grpc_port = grpc_server(arguments.grpc_port)

    def stop(signum, frame):
        # shutdown() waits for serve_forever to return, so not from its own thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    emit(f"listening on http://127.0.0.1:{server.server_address[1]}")
    if grpc_receiver is not None:
        emit(f"grpc on 127.0.0.1:{grpc_port}")
    try:
        server.serve_forever()
    finally:
        server.server_close()
        if grpc_receiver is not None:
            grpc_receiver.stop(None).wait()


if __name__ == "__main__":
    main()
