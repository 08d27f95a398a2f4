"""A stand-in for systemd's notification socket, for test/setup/systemd.test.ts.

Node cannot bind a Unix datagram socket, so the test runs this. It binds the
path given as argv[1], and for each datagram (what `systemd-notify` sends)
checks whether TCP 127.0.0.1:argv[2] accepts a connection at that moment,
prints one JSON line {"message": ..., "portAccepts": ...}, and closes any
file descriptors passed with it, which is how systemd releases the helper's
barrier (BARRIER=1) once it has read what came before.
"""
import array
import json
import os
import socket
import sys

path, port = sys.argv[1], int(sys.argv[2])
receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
receiver.bind(path)
os.chmod(path, 0o777)
print(json.dumps({"listening": path}), flush=True)

def port_accepts() -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False

while True:
    data, ancillary, _flags, _address = receiver.recvmsg(65536, socket.CMSG_SPACE(64 * 4))
    message = data.decode("utf-8", "replace")
    print(json.dumps({"message": message, "portAccepts": port_accepts()}), flush=True)
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = array.array("i")
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
            for fd in fds:
                os.close(fd)
