#!/usr/bin/env python3
"""Serves `git http-backend` over HTTP on a free loopback port, with basic auth, for FerryVault's tests.

Usage: git_http_server.py PROJECT_ROOT TOKEN COUNT_FILE
Prints "PORT <n>" once listening. Every request needs basic auth whose password is TOKEN (any user name);
a wrong or missing one gets 401. The number of 401s so far is written to COUNT_FILE before each 401 is sent,
so a test can count the attempts once its git operation has returned.
Request bodies may be chunked (libgit2 sends pushes chunked). The token itself is never printed.
"""
import base64
import http.server
import os
import subprocess
import sys
import threading

ROOT, TOKEN, COUNT_FILE = sys.argv[1], sys.argv[2], sys.argv[3]
LOCK = threading.Lock()
UNAUTHORIZED = [0]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def authorised(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        try:
            _, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except Exception:
            return False
        return password == TOKEN

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def handle_any(self):
        body = self.read_body() if self.command == "POST" else b""
        if not self.authorised():
            with LOCK:
                UNAUTHORIZED[0] += 1
                with open(COUNT_FILE, "w") as counter:
                    counter.write(str(UNAUTHORIZED[0]))
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="ferry-test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = dict(os.environ)
        env.update({
            "GIT_PROJECT_ROOT": ROOT, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query,
            "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": "ferry", "REMOTE_ADDR": "127.0.0.1",
            "GATEWAY_INTERFACE": "CGI/1.1", "SERVER_PROTOCOL": "HTTP/1.1",
        })
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        result = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=env)
        head, _, payload = result.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = result.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = handle_any
    do_POST = handle_any


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"PORT {server.server_address[1]}", flush=True)
server.serve_forever()
