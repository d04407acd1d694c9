"""A client of passfs's evaluation protocol, written from the table in
docs/service.md ("The evaluation protocol"), not with passfs's own encoder:
tests/cli/evaluator_protocol.sh drives an evaluation process with it."""
import os
import socket
import struct

MAGIC, VERSION = 0x70667665, 4


def msg(t, payload=b""):
    """One framed message: u8 type, u32 length, payload."""
    return t + struct.pack("<I", len(payload)) + payload


class Evaluator:
    """`passfs --passfs-evaluator` with a socket on its descriptor 3."""

    def __init__(self, passfs):
        self.sock, child = socket.socketpair()
        self.pid = os.fork()
        if self.pid == 0:
            os.dup2(child.fileno(), 3)
            os.execv(passfs, [passfs, "--passfs-evaluator"])
        child.close()

    def request(self, graph, pass_src, *, warmup=1, trials=2, cold=0, quiet=1, trial_times=0, check_only=0,
                timeout_s=20.0, b=0.1, p=0.0, lock_timeout_s=600.0, seed=7, backend=b"cpu",
                pass_label=b"pass.c", graph_label=b"graph.json"):
        """The hello and the 'Q' message."""
        q = struct.pack("<6i", warmup, trials, cold, quiet, trial_times, check_only)
        q += struct.pack("<4d", timeout_s, b, p, lock_timeout_s) + struct.pack("<Q", seed)
        for s in (backend, pass_label, graph_label, graph, pass_src):
            q += struct.pack("<I", len(s)) + s
        self.sock.sendall(struct.pack("<II", MAGIC, VERSION) + msg(b"Q", q))

    def send(self, t, payload=b""):
        self.sock.sendall(msg(t, payload))

    def _recv(self, n):
        d = b""
        while len(d) < n:
            c = self.sock.recv(n - len(d))
            if not c:
                raise SystemExit("FAIL the stream ended early after %r" % d)
            d += c
        return d

    def next(self):
        """The next message: (type, body)."""
        t, n = self._recv(1), struct.unpack("<I", self._recv(4))[0]
        return t, self._recv(n)

    def wait(self):
        """The process's exit code."""
        _, st = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(st)


def result(body):
    """An 'R' body: (rc, message, JSON text)."""
    rc, mn = struct.unpack("<iI", body[:8])
    return rc, body[8:8 + mn].decode(), body[12 + mn:]
