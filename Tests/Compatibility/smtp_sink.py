"""A real SMTP server (aiosmtpd) that stores every message it accepts, for Ferry's mail tests.

Usage: python3 smtp_sink.py MAILDIR [--tls-cert CERT --tls-key KEY [--implicit-tls]] [--auth USER:PASS [--auth-only PLAIN|LOGIN]]

Listens on a free loopback port and prints `ready PORT` once it accepts connections. Each accepted message is
written, exactly as received (dot-stuffing undone), to MAILDIR/<n>-<recipient>.eml, one file per recipient,
written under a temporary name and renamed so a reader never sees half a file. Recipients at `reject@...` are
refused with 550. With a certificate it offers STARTTLS (or, with --implicit-tls, speaks TLS from the first byte, as
an smtps:// server does); with --auth it requires AUTH PLAIN or LOGIN (allowed without TLS, as the connection is
loopback). Exits when standard input closes or on SIGTERM.
"""

import argparse
import asyncio
import itertools
import logging
import os
import re
import signal
import ssl
import sys
import warnings

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword, TLSSetupException


class Sink:
    """Accepts every recipient but `reject@...` and stores each message once per recipient."""

    def __init__(self, maildir):
        self.maildir = maildir
        self.counter = itertools.count(1)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower().startswith("reject@"):
            return "550 5.1.1 Mailbox unavailable: this sink refuses reject@ addresses"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        content = envelope.original_content or envelope.content
        for recipient in envelope.rcpt_tos:
            # The recipient goes into the file name, so only characters safe in one.
            safe = re.sub(r"[^A-Za-z0-9@._+-]", "_", recipient)[:100]
            name = f"{next(self.counter)}-{safe}.eml"
            temporary = os.path.join(self.maildir, f".{name}.tmp")
            with open(temporary, "wb") as file:
                file.write(content)
            os.rename(temporary, os.path.join(self.maildir, name))
        return "250 Message accepted for delivery"


def make_authenticator(user, password):
    """Accepts exactly USER:PASS, by PLAIN or LOGIN."""

    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login == user.encode()
            and auth_data.password == password.encode()
        )
        # handled=False: aiosmtpd then answers 535 itself (with the default it answers nothing and the client hangs).
        return AuthResult(success=ok, handled=False)

    return authenticate


async def main():
    # A child inherits its parent's blocked signals, and a Swift test spawns from threads that block SIGTERM.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("maildir")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--implicit-tls", action="store_true", help="TLS from the first byte instead of STARTTLS")
    parser.add_argument("--auth", help="USER:PASS")
    parser.add_argument("--auth-only", choices=["PLAIN", "LOGIN"], help="offer only this AUTH mechanism")
    args = parser.parse_args()
    # AUTH without TLS is what the tests want (loopback); keep aiosmtpd's warnings about it and its notices quiet.
    warnings.filterwarnings("ignore", module="aiosmtpd")
    logging.getLogger("mail.log").setLevel(logging.ERROR)
    # A client refusing the self-signed certificate is a test's expected outcome, not an error to print.
    logging.getLogger("mail.log").addFilter(
        lambda record: not (record.exc_info and isinstance(record.exc_info[1], TLSSetupException))
    )

    tls_context = None
    if args.tls_cert:
        tls_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls_context.load_cert_chain(args.tls_cert, args.tls_key)
    auth_options = {}
    if args.auth:
        user, _, password = args.auth.partition(":")
        auth_options = dict(
            authenticator=make_authenticator(user, password), auth_required=True, auth_require_tls=False
        )
        if args.auth_only:
            auth_options["auth_exclude_mechanism"] = [{"PLAIN": "LOGIN", "LOGIN": "PLAIN"}[args.auth_only]]

    handler = Sink(args.maildir)
    loop = asyncio.get_running_loop()
    # Not aiosmtpd's Controller: it cannot listen on port 0 and report the port it got.
    starttls_context, implicit_context = (None, tls_context) if args.implicit_tls else (tls_context, None)
    server = await loop.create_server(
        lambda: SMTP(handler, hostname="sink.localhost", tls_context=starttls_context, **auth_options),
        host="127.0.0.1",
        port=0,
        ssl=implicit_context,
    )
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)

    def stdin_readable():
        # End of input (the test process exited or closed the pipe) stops the sink.
        if not os.read(sys.stdin.fileno(), 4096):
            loop.remove_reader(sys.stdin.fileno())
            stop.set()

    loop.add_reader(sys.stdin.fileno(), stdin_readable)
    print(f"ready {server.sockets[0].getsockname()[1]}", flush=True)
    await stop.wait()
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
