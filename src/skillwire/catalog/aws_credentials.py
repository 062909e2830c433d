"""AWS credentials, region and endpoint for an `s3://` store, the way the AWS CLI finds them.

obstore reads the environment itself: `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`,
`AWS_REGION`, `AWS_ENDPOINT_URL`, and also web identity (`AWS_WEB_IDENTITY_TOKEN_FILE` with
`AWS_ROLE_ARN`, as on EKS), ECS/EKS container credentials and the EC2 instance metadata service. It
does not read the shared files `~/.aws/credentials` and `~/.aws/config`; this module does, for the
profile `AWS_PROFILE` (or `default`):

- static keys, `region` and `endpoint_url`, for what the environment leaves unset;
- `credential_process`: the command is split as the AWS CLI splits it (POSIX shell words, no shell
  runs it), its Version 1 JSON gives the keys, and they are fetched again before their `Expiration`
  through obstore's public `credential_provider` hook;
- profiles that need an AWS service to get credentials (SSO, assume-role, web identity given as
  profile keys) are not followed: they fail with one line naming the key and the work-around, since
  nothing here could test them against the real service.

The precedence is the AWS CLI's: credentials in the environment win over any profile; in a profile,
SSO and roles come before static keys, static keys in `credentials` before `credential_process`,
and `credential_process` before static keys in `config`.
"""

from __future__ import annotations

import configparser
import contextlib
import json
import logging
import os
import selectors
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillwire.core.errors import AwsCredentialsError
from skillwire.ops.logs import register_secret

if TYPE_CHECKING:
    from obstore.store import S3Credential

logger = logging.getLogger("skillwire.aws")

# Refresh this long before `Expiration` (or at half the credential's lifetime, if that is sooner): a
# request signed just before expiry may still reach the store after it. obstore reads the attribute
# `refresh_threshold` of a provider and asks it again once that close to expiry.
REFRESH_BEFORE = timedelta(minutes=5)
# A credential process is an `aws` command or a small script that prints a few hundred bytes at once;
# one that runs longer or prints more is broken, and must not stall a server or fill its memory.
PROCESS_TIMEOUT_SECONDS = 30.0
MAX_PROCESS_OUTPUT = 64 * 1024
# After a failed run, wait this long before running the process again (until then the last valid
# credentials are used, or the failure repeated): obstore asks on every request near expiry.
RETRY_PAUSE = timedelta(seconds=5)

EXPORT_WORKAROUND = "credential_process = aws configure export-credentials --profile {profile} --format process"


# A profile's static settings: (obstore config key, the variable that overrides it). obstore's `config`
# overrides the environment, so a setting is taken from the files only when its variable is unset.
_STATIC_KEYS = {
    "aws_access_key_id": ("access_key_id", "AWS_ACCESS_KEY_ID"),
    "aws_secret_access_key": ("secret_access_key", "AWS_SECRET_ACCESS_KEY"),
    "aws_session_token": ("session_token", "AWS_SESSION_TOKEN"),
}
_CONFIG_KEYS = {
    "region": ("region", "AWS_REGION"),
    "endpoint_url": ("endpoint", "AWS_ENDPOINT_URL"),
}
# Variables with which obstore finds credentials itself and which the AWS CLI prefers to any profile's;
# when one is set, no profile is asked for credentials. (Container credentials and the instance
# metadata service come after the profile for the AWS CLI, and for obstore once the profile's
# credentials are given to it.)
_CREDENTIALS_FROM_ENVIRONMENT = ("AWS_ACCESS_KEY_ID", "AWS_WEB_IDENTITY_TOKEN_FILE")


@dataclass(frozen=True)
class Profile:
    """One profile's sections of the two shared files (empty when a file or the section is absent)."""

    name: str
    credentials: dict[str, str]  # from `~/.aws/credentials`, section `[NAME]`
    config: dict[str, str]  # from `~/.aws/config`, section `[profile NAME]` (`[default]` for the default)
    found: bool = True  # whether either file has a section for it

    def get(self, key: str) -> str:
        """The credentials file's value over the config file's, as the AWS CLI merges them."""
        return (self.credentials.get(key) or self.config.get(key) or "").strip()


def load_profile(environ: Mapping[str, str]) -> Profile:
    name = environ.get("AWS_PROFILE") or environ.get("AWS_DEFAULT_PROFILE") or "default"
    home = Path(environ.get("HOME") or Path.home())
    credentials_file = Path(environ.get("AWS_SHARED_CREDENTIALS_FILE") or home / ".aws" / "credentials")
    config_file = Path(environ.get("AWS_CONFIG_FILE") or home / ".aws" / "config")
    config_section = name if name == "default" else f"profile {name}"
    credentials = _ini_section(credentials_file, name)
    config = _ini_section(config_file, config_section)
    return Profile(name, credentials or {}, config or {}, found=credentials is not None or config is not None)


def _ini_section(path: Path, section: str) -> dict[str, str] | None:
    """The section's keys; None when the file or the section is missing or unreadable (as the AWS CLI
    treats an unreadable file: as absent)."""
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (OSError, configparser.Error, UnicodeDecodeError):
        return None
    return dict(parser.items(section)) if parser.has_section(section) else None


@dataclass(frozen=True)
class S3Settings:
    """What `S3Store` is given beyond what obstore reads from the environment itself."""

    config: dict[str, str]
    credential_provider: ProcessCredentials | None = None


def s3_settings(environ: Mapping[str, str]) -> S3Settings:
    """The settings of the current profile for `S3Store`; with `credential_process`, the process has
    run once already, so a broken one is reported here as one line rather than on the first request."""
    profile = load_profile(environ)
    config: dict[str, str] = {}
    for name, (key, variable) in _CONFIG_KEYS.items():
        value = profile.get(name)
        if value and not environ.get(variable):
            config[key] = value
    if "region" not in config and not environ.get("AWS_REGION") and environ.get("AWS_DEFAULT_REGION"):
        config["region"] = environ["AWS_DEFAULT_REGION"]
    if any(environ.get(variable) for variable in _CREDENTIALS_FROM_ENVIRONMENT):
        return S3Settings(config)
    if not profile.found and (environ.get("AWS_PROFILE") or environ.get("AWS_DEFAULT_PROFILE")):
        # Named on purpose and absent: the AWS CLI refuses too, rather than sign requests with nothing.
        raise AwsCredentialsError(
            f"AWS profile {profile.name!r} (from AWS_PROFILE) is in neither the credentials file nor the config file"
        )
    refuse_service_profiles(profile)
    static = profile.credentials if profile.credentials.get("aws_access_key_id") else {}
    command = "" if static else profile.get("credential_process")
    if command:
        provider = ProcessCredentials(command, profile.name)
        provider()
        return S3Settings(config, provider)
    static = static or profile.config
    for name, (key, _) in _STATIC_KEYS.items():
        if static.get(name, "").strip():
            config[key] = static[name].strip()
    if "access_key_id" not in config and not instance_metadata_expected(environ):
        missing = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
        if not (environ.get("AWS_ENDPOINT_URL") or environ.get("AWS_ENDPOINT") or "endpoint" in config):
            missing.append("AWS_ENDPOINT_URL (for a store other than AWS S3)")
        raise AwsCredentialsError(
            f"no credentials: {', '.join(missing)} not set, and no AWS profile gives keys or a "
            "credential_process; this is not a cloud host, so instance metadata is not asked "
            "(set AWS_EC2_METADATA_SERVICE_ENDPOINT to ask it)"
        )
    return S3Settings(config)


# Where the DMI tables name the machine's maker (Linux): "Amazon EC2" on every current EC2 instance.
_DMI_FILES = ("/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/board_vendor", "/sys/class/dmi/id/product_name")


def instance_metadata_expected(environ: Mapping[str, str]) -> bool:
    """Whether obstore may fall back to the cloud's metadata service for credentials.

    Told apart without asking the network: the environment points there (ECS's container credentials
    variables, or AWS_EC2_METADATA_SERVICE_ENDPOINT), or the machine's DMI tables say it is an EC2
    instance (what the AWS SDKs' own EC2 detection reads). AWS_EC2_METADATA_DISABLED=true says never.
    Anywhere else, a missing key is a mistake to report, not a reason to send requests to 169.254.169.254.
    """
    if environ.get("AWS_EC2_METADATA_DISABLED", "").strip().lower() == "true":
        return False
    pointed = ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")
    if any(environ.get(name) for name in (*pointed, "AWS_EC2_METADATA_SERVICE_ENDPOINT")):
        return True
    for path in _DMI_FILES:
        try:
            if "amazon ec2" in Path(path).read_text(errors="replace").lower():
                return True
        except OSError:
            continue
    try:
        return Path("/sys/hypervisor/uuid").read_text(errors="replace").lower().startswith("ec2")
    except OSError:
        return False


def refuse_service_profiles(profile: Profile) -> None:
    """One line for a profile whose credentials come from an AWS service skillwire does not call."""
    name = profile.name
    export = EXPORT_WORKAROUND.format(profile=name)
    for key in ("sso_session", "sso_start_url"):
        if profile.get(key):
            raise AwsCredentialsError(
                f"AWS profile {name!r} signs in with SSO ({key}), which skillwire does not follow; "
                f"make a profile with `{export}` (after `aws sso login`) and set AWS_PROFILE to it"
            )
    if profile.get("web_identity_token_file"):
        raise AwsCredentialsError(
            f"AWS profile {name!r} uses web identity (web_identity_token_file), which skillwire does not read "
            "from a profile; set AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN instead (obstore follows those), "
            f"or make a profile with `{export}`"
        )
    if profile.get("role_arn"):
        raise AwsCredentialsError(
            f"AWS profile {name!r} assumes a role (role_arn), which skillwire does not follow; "
            f"make a profile with `{export}` and set AWS_PROFILE to it"
        )


@dataclass(frozen=True)
class _Credential:
    access_key_id: str
    secret_access_key: str
    session_token: str | None
    expiration: datetime | None
    fetched_at: datetime

    def refresh_at(self) -> datetime | None:
        if self.expiration is None:
            return None  # credentials without an Expiration never expire (as for the AWS CLI)
        return self.expiration - min(REFRESH_BEFORE, (self.expiration - self.fetched_at) / 2)

    def as_obstore(self) -> S3Credential:
        return {
            "access_key_id": self.access_key_id,
            "secret_access_key": self.secret_access_key,
            "token": self.session_token,
            "expires_at": self.expiration,
        }


class ProcessCredentials:
    """An obstore `S3CredentialProvider` that runs a profile's `credential_process`.

    It is called by obstore whenever obstore's own cache is within `refresh_threshold` of expiry, and
    runs the process only when the last credentials are due for refresh, so concurrent requests
    near expiry start one process, not one each.
    """

    refresh_threshold = REFRESH_BEFORE

    def __init__(
        self,
        command: str,
        profile: str,
        *,
        timeout_seconds: float = PROCESS_TIMEOUT_SECONDS,
        max_output: int = MAX_PROCESS_OUTPUT,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.profile = profile
        self.timeout_seconds = timeout_seconds
        self.max_output = max_output
        self._now = now
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise self._error(f"cannot be split into words ({exc})") from None
        if not self.argv:
            raise self._error("is empty")
        self._lock = threading.Lock()
        self._current: _Credential | None = None
        self._next_attempt: datetime | None = None
        self._last_failure: AwsCredentialsError | None = None
        self.runs = 0  # how many times the process ran, for the log and the tests

    def _error(self, cause: str) -> AwsCredentialsError:
        return AwsCredentialsError(f"credential_process of AWS profile {self.profile!r} {cause}")

    def __call__(self) -> S3Credential:
        with self._lock:
            now = self._now()
            current = self._current
            valid = current is not None and (current.expiration is None or now < current.expiration)
            if current is not None:
                refresh_at = current.refresh_at()
                if refresh_at is None or now < refresh_at:
                    return current.as_obstore()
            if self._next_attempt is not None and now < self._next_attempt:
                # The last run failed moments ago: not one process per request while it is broken.
                if valid and current is not None:
                    return current.as_obstore()
                assert self._last_failure is not None
                raise self._last_failure
            try:
                fresh = self.fetch()
            except AwsCredentialsError as exc:
                self._next_attempt, self._last_failure = now + RETRY_PAUSE, exc
                if not valid or current is None or current.expiration is None:
                    raise
                # Still valid for a while: keep signing with them, and try again after the pause.
                logger.warning("%s; the current credentials are valid until %s", exc, current.expiration.isoformat())
                return current.as_obstore()
            self._current, self._next_attempt, self._last_failure = fresh, None, None
            return fresh.as_obstore()

    def fetch(self) -> _Credential:
        """Run the process once and parse what it printed."""
        self.runs += 1
        code, out, err = self._run()
        if code != 0:
            how = f"was killed by signal {-code}" if code < 0 else f"exited with {code}"
            return_line = _last_line(err)
            raise self._error(f"{how}: {return_line}" if return_line else how)
        return self._parse(out)

    def _run(self) -> tuple[int, bytes, bytes]:
        """The exit code, stdout and the tail of stderr; bounded in time and in stdout's size."""
        try:
            # Its own process group, so a timeout also stops what it started (an `aws` CLI's children).
            process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise self._error(f"names a program that does not exist: {self.argv[0]!r}") from None
        except OSError as exc:
            raise self._error(f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from None
        deadline = time.monotonic() + self.timeout_seconds
        out, err = bytearray(), bytearray()
        assert process.stdout is not None
        assert process.stderr is not None
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(process.stdout, selectors.EVENT_READ, out)
                selector.register(process.stderr, selectors.EVENT_READ, err)
                while selector.get_map():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise self._error(f"did not finish within {self.timeout_seconds:g} s (stopped)")
                    for key, _ in selector.select(left):
                        chunk = os.read(key.fd, 65536)
                        if not chunk:
                            selector.unregister(key.fileobj)
                            continue
                        buffer: bytearray = key.data
                        buffer += chunk
                        if buffer is out and len(out) > self.max_output:
                            raise self._error(f"printed more than {self.max_output} bytes (stopped)")
                        if buffer is err and len(err) > self.max_output:
                            del err[: -self.max_output]  # only its last line is shown
            try:
                code = process.wait(timeout=max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                raise self._error(f"did not exit within {self.timeout_seconds:g} s (stopped)") from None
        except BaseException:
            _kill_group(process)
            raise
        finally:
            process.stdout.close()
            process.stderr.close()
        return code, bytes(out), bytes(err)

    def _parse(self, out: bytes) -> _Credential:
        try:
            data: Any = json.loads(out)
        except (ValueError, UnicodeDecodeError):
            # Not echoed: what a credential process prints may hold a secret.
            raise self._error(f"printed {len(out)} bytes that are not JSON") from None
        if not isinstance(data, dict):
            raise self._error(f"printed JSON that is not an object ({type(data).__name__})")
        if data.get("Version") != 1:
            raise self._error(f"printed Version {data.get('Version')!r}; only Version 1 is understood")
        fields: dict[str, str] = {}
        for name in ("AccessKeyId", "SecretAccessKey"):
            value = data.get(name)
            if not isinstance(value, str) or not value:
                raise self._error(f"printed no {name}")
            fields[name] = value
        token = data.get("SessionToken")
        if token is not None and not isinstance(token, str):
            raise self._error("printed a SessionToken that is not a string")
        now = self._now()
        expiration = self._expiration(data.get("Expiration"))
        if expiration is not None and expiration <= now:
            raise self._error(f"printed credentials that expired at {expiration.isoformat()}")
        register_secret(fields["SecretAccessKey"])  # never in a log line (ops.logs)
        register_secret(token)
        return _Credential(fields["AccessKeyId"], fields["SecretAccessKey"], token or None, expiration, now)

    def _expiration(self, value: object) -> datetime | None:
        """The parsed `Expiration` (UTC when it names no zone); None when absent."""
        if value is None:
            return None
        try:
            parsed = datetime.fromisoformat(value.strip()) if isinstance(value, str) else None
        except ValueError:
            parsed = None
        if parsed is None:
            raise self._error(f"printed an Expiration that is not an ISO 8601 time: {value!r}")
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _last_line(data: bytes) -> str:
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[-1] if len(lines[-1]) <= 200 else lines[-1][:197] + "..."


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def provider_failure(message: str) -> str | None:
    """The provider's own message inside obstore's error for a failed refresh, or None.

    obstore reports a provider's exception as "... for path External AWS credential provider:
    AwsCredentialsError: <message>"; the message already names the profile and the cause."""
    marker = f"External AWS credential provider: {AwsCredentialsError.__name__}: "
    _, found, rest = message.partition(marker)
    return (rest.strip() or None) if found else None
