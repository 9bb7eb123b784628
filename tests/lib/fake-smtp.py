#!/usr/bin/env python3
# fake-smtp.py - a real SMTP server on 127.0.0.1 for quorum's tests (no
# TLS: it does not offer STARTTLS). Each message is written to
# DIR/N.eml, its envelope (MAIL FROM, then each RCPT TO) to DIR/N.env.
#
# usage: fake-smtp.py --port-file FILE --record DIR [--timeout SECONDS]
import argparse
import os
import socketserver
import threading

ap = argparse.ArgumentParser()
ap.add_argument("--port-file", required=True)
ap.add_argument("--record", required=True)
ap.add_argument("--timeout", type=float, default=60)
args = ap.parse_args()
os.makedirs(args.record, exist_ok=True)
COUNT = [0]
LOCK = threading.Lock()


class Handler(socketserver.StreamRequestHandler):
    def send(self, line):
        self.wfile.write((line + "\r\n").encode())

    def handle(self):
        env = []
        self.send("220 fake-smtp ready")
        while True:
            line = self.rfile.readline()
            if not line:
                return
            cmd = line.decode("utf-8", "replace").rstrip("\r\n")
            up = cmd.upper()
            if up.startswith("EHLO"):
                self.wfile.write(b"250-fake-smtp\r\n250 8BITMIME\r\n")
            elif up.startswith("HELO"):
                self.send("250 fake-smtp")
            elif up.startswith("MAIL FROM:") or up.startswith("RCPT TO:"):
                env.append(cmd)
                self.send("250 ok")
            elif up == "DATA":
                self.send("354 go ahead")
                data = []
                while True:
                    l = self.rfile.readline()
                    if not l or l in (b".\r\n", b".\n"):
                        break
                    if l.startswith(b".."):
                        l = l[1:]
                    data.append(l)
                with LOCK:
                    n = COUNT[0]
                    COUNT[0] += 1
                with open(os.path.join(args.record, "%d.eml" % n), "wb") as f:
                    f.write(b"".join(data).replace(b"\r\n", b"\n"))
                with open(os.path.join(args.record, "%d.env" % n), "w") as f:
                    f.write("\n".join(env) + "\n")
                env = []
                self.send("250 queued")
            elif up == "QUIT":
                self.send("221 bye")
                return
            elif up == "RSET" or up == "NOOP":
                env = []
                self.send("250 ok")
            else:
                self.send("502 not implemented")


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
with open(args.port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(args.port_file + ".tmp", args.port_file)
threading.Timer(args.timeout, srv.shutdown).start()
srv.serve_forever()
