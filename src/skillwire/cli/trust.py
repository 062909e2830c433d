"""`skillwire trust add|list|remove`: the publisher keys a host trusts (host/trust.py).

    skillwire trust add acme ~/.ssh/acme_publisher.pub --origin work --prefix skill://acme/
    skillwire trust list
    skillwire trust remove acme

Only public keys are stored (in `<user config dir>/skillwire/trust.json`, or `--file`). A key with no
`--origin` and no `--prefix` is trusted for every origin and URI.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from skillwire.cli.args import UsageError
from skillwire.host.trust import TrustedKey, TrustStore


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "trust",
        help="manage the publisher keys whose signatures a host trusts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--file", type=Path, help="the trust file (default: the user config dir's skillwire/trust.json)")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser(
        "add",
        help="trust a publisher's SSH public key (a NAME already trusted is replaced, scope and all)",
        description="Trust a publisher's SSH public key. Adding a NAME already in the trust file replaces that "
        "entry: its key and its scope (--origin, --prefix) become exactly what this command gives.",
    )
    add.add_argument("name", help="a name for the publisher, shown in approval prompts")
    add.add_argument("key", help="an OpenSSH public key file (KEY.pub), or the key line itself")
    add.add_argument("--origin", action="append", default=[], metavar="LABEL", help="only for this origin label")
    add.add_argument("--prefix", action="append", default=[], metavar="URI", help="only for skill URIs under this")
    actions.add_parser("list", help="the trusted keys and their scope")
    remove = actions.add_parser("remove", help="stop trusting a key")
    remove.add_argument("name")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    store = TrustStore(args.file)
    try:
        if args.action == "add":
            candidate = Path(args.key).expanduser()
            key_text = args.key.strip()
            looks_like_a_key = key_text.startswith(("ssh-", "ecdsa-", "sk-"))
            if not candidate.is_file() and not looks_like_a_key:
                # A path that is not there, not a key that does not parse.
                raise UsageError(f"{args.key}: no such file (give a .pub file, or the public key line itself)")
            line = candidate.read_text(encoding="utf-8").strip() if candidate.is_file() else key_text
            if line.startswith("-----BEGIN"):
                raise UsageError(f"{args.key} is a private key; give its .pub file (only public keys are stored)")
            key = TrustedKey(args.name, line, tuple(args.origin), tuple(args.prefix))
            before = next((k for k in store.trusted_keys() if k.name == key.name), None)
            store.add(key)
            if before is not None:
                print(f"replaced {before.describe()}")
            print(f"trusted {key.describe()}")
        elif args.action == "list":
            keys = store.trusted_keys()
            for key in keys:
                print(key.describe())
            if not keys:
                print(f"no trusted publisher keys in {store.path}")
        elif not store.remove(args.name):
            raise UsageError(f"no trusted key named {args.name!r} in {store.path}")
        else:
            print(f"no longer trusting {args.name!r}")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return 0
