#!/usr/bin/env python3
"""A libvips-based image server, the engine imgproxy is built on, for the proxy benchmark's
imgproxy-dialect and AVIF rows: GET /NAME answers the photo NAME of PHOTOS_DIR resized to WIDTH
px wide (`thumbnail`, shrinking while loading as imgproxy does) and written as JPEG at quality
80, without metadata (GET /NAME?w=N: N px wide instead); GET /NAME?avif as AVIF (libheif over libaom, Q 80, effort 0, its fastest). Two processes share one listening socket (imgproxy runs one process with a
worker per core; a Python server needs processes for two cores); libvips itself is single-
threaded per request (VIPS_CONCURRENCY=1), as each request is on one core here.

Usage: vips_server.py PORT PHOTOS_DIR WIDTH   (prints "ready" once both processes listen)
"""
import http.server
import urllib.parse
import os
import socket
import sys

os.environ["VIPS_CONCURRENCY"] = "1"
import pyvips  # noqa: E402


def main():
    port, photos, width = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            target, _, query = self.path.partition("?")
            path = os.path.join(photos, os.path.basename(target.lstrip("/")))
            if self.path == "/health" or not os.path.isfile(path):
                body, status = b"ok" if self.path == "/health" else b"not found", 200 if self.path == "/health" else 404
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            asked = urllib.parse.parse_qs(query, keep_blank_values=True)
            image = pyvips.Image.thumbnail(path, int(asked.get("w", [width])[0]))
            if "avif" in asked:
                body, kind = image.heifsave_buffer(compression="av1", Q=80, effort=0, strip=True), "image/avif"
            else:
                body, kind = image.jpegsave_buffer(Q=80, strip=True), "image/jpeg"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    if os.fork() == 0:
        serve(listener, Handler)
        return
    print("ready", flush=True)
    serve(listener, Handler)


def serve(listener, handler):
    server = http.server.HTTPServer(("127.0.0.1", 0), handler, bind_and_activate=False)
    server.socket = listener
    server.serve_forever()


if __name__ == "__main__":
    main()
