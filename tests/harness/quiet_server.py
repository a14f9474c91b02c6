"""The threaded HTTP server the Python mocks run on 127.0.0.1: quiet about a client that went
away mid-answer (a stream the gateway cut is no error), its port printed on the first line."""

from http.server import ThreadingHTTPServer


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def serve(handler, on_port=None):
    """Serves `handler` on a free port of 127.0.0.1, printing the port first; `on_port(port)` runs
    before the first request."""
    server = QuietServer(("127.0.0.1", 0), handler)
    port = server.server_address[1]
    if on_port:
        on_port(port)
    print(port, flush=True)
    server.serve_forever()
