"""`catalog.aws_credentials`: profiles of the AWS shared files and `credential_process`.

Every process here is a real one (a small Python script run without a shell), and every shared file a
real file; the end-to-end runs against the SeaweedFS store are in test_objectstore_credentials.py.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from skillwire.catalog.aws_credentials import ProcessCredentials, provider_failure, s3_settings
from skillwire.core.errors import AwsCredentialsError

KEYS = {"AccessKeyId": "AKIDEXAMPLE", "SecretAccessKey": "secret-example", "SessionToken": "token-example"}


def script(tmp_path: Path, body: str, name: str = "creds.py") -> str:
    """A credential_process command line running `body` with this interpreter; the folder has a space
    in its name, so the command only works when split the way the AWS CLI splits it."""
    folder = tmp_path / "credential scripts"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("import json, os, sys, time\n" + body)
    return shlex.join([sys.executable, str(path)])


def printing(tmp_path: Path, payload: object, *, runs: Path | None = None) -> str:
    """A process printing `payload` as JSON, appending a line to `runs` each time it runs."""
    record = f"open({str(runs)!r}, 'a').write('run\\n')\n" if runs is not None else ""
    return script(tmp_path, record + f"print(json.dumps({payload!r}))\n")


def in_seconds(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def test_version_1_json_gives_the_credential(tmp_path: Path) -> None:
    expires = in_seconds(3600)
    provider = ProcessCredentials(printing(tmp_path, {"Version": 1, **KEYS, "Expiration": expires}), "ci")
    credential = provider()
    assert credential["access_key_id"] == "AKIDEXAMPLE"
    assert credential["secret_access_key"] == "secret-example"
    assert credential.get("token") == "token-example"
    assert credential["expires_at"] == datetime.fromisoformat(expires)


def test_no_expiration_means_fetched_once(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    payload = {"Version": 1, "AccessKeyId": "a", "SecretAccessKey": "b"}
    provider = ProcessCredentials(printing(tmp_path, payload, runs=runs), "ci")
    for _ in range(5):
        credential = provider()
    assert credential["expires_at"] is None
    assert credential.get("token") is None
    assert runs.read_text().count("run") == 1


def test_refreshed_before_expiry_and_not_before(tmp_path: Path) -> None:
    """A credential living 6 s is reused for its first half, then fetched again before it expires."""
    runs = tmp_path / "runs"
    body = (
        f"open({str(runs)!r}, 'a').write('run\\n')\n"
        "from datetime import datetime, timedelta, timezone\n"
        "expires = (datetime.now(timezone.utc) + timedelta(seconds=6)).isoformat()\n"
        "print(json.dumps({'Version': 1, 'AccessKeyId': 'k%d' % len(open(sys.argv[1]).read().split()),"
        " 'SecretAccessKey': 's', 'Expiration': expires}))\n"
    )
    provider = ProcessCredentials(script(tmp_path, body) + " " + shlex.quote(str(runs)), "ci")
    first = provider()
    assert provider() == first  # within the first half of its life: no new process
    assert runs.read_text().count("run") == 1
    time.sleep(3.2)  # past half its life (3 s), with 2 s to spare for a slow process start
    second = provider()
    assert runs.read_text().count("run") == 2
    assert second["access_key_id"] != first["access_key_id"]
    assert first["expires_at"] is not None
    assert datetime.now(UTC) < first["expires_at"]  # refreshed while the old one was still valid


def test_a_failed_refresh_keeps_the_valid_credential_and_pauses(tmp_path: Path) -> None:
    flag = tmp_path / "fail"
    runs = tmp_path / "runs"
    body = (
        f"open({str(runs)!r}, 'a').write('run\\n')\n"
        f"if os.path.exists({str(flag)!r}):\n    sys.exit('the broker is down')\n"
        "from datetime import datetime, timedelta, timezone\n"
        "expires = (datetime.now(timezone.utc) + timedelta(seconds=6)).isoformat()\n"
        "print(json.dumps({'Version': 1, 'AccessKeyId': 'k', 'SecretAccessKey': 's', 'Expiration': expires}))\n"
    )
    provider = ProcessCredentials(script(tmp_path, body), "ci")
    first = provider()
    flag.touch()
    time.sleep(3.2)
    assert provider() == first  # refresh failed: the still-valid credential is used
    assert provider() == first  # and the process is not run again at once
    assert runs.read_text().count("run") == 2


@pytest.mark.parametrize(
    ("body", "cause"),
    [
        ("sys.stderr.write('warming up\\nSSO token expired\\n'); sys.exit(3)", "exited with 3: SSO token expired"),
        ("import signal; os.kill(os.getpid(), signal.SIGKILL)", "was killed by signal 9"),
        ("print('hello, not json')", "printed 16 bytes that are not JSON"),
        ("print('[1, 2]')", "printed JSON that is not an object (list)"),
        ("print(json.dumps({'Version': 2}))", "printed Version 2; only Version 1 is understood"),
        ("print(json.dumps({'AccessKeyId': 'a', 'SecretAccessKey': 'b'}))", "printed Version None; only"),
        ("print(json.dumps({'Version': 1, 'SecretAccessKey': 'b'}))", "printed no AccessKeyId"),
        ("print(json.dumps({'Version': 1, 'AccessKeyId': 'a', 'SecretAccessKey': ''}))", "printed no SecretAccessKey"),
        (
            "print(json.dumps({'Version': 1, 'AccessKeyId': 'a', 'SecretAccessKey': 'b', 'SessionToken': 5}))",
            "printed a SessionToken that is not a string",
        ),
        (
            "print(json.dumps({'Version': 1, 'AccessKeyId': 'a', 'SecretAccessKey': 'b', 'Expiration': 'soon'}))",
            "printed an Expiration that is not an ISO 8601 time: 'soon'",
        ),
        (
            "print(json.dumps({'Version': 1, 'AccessKeyId': 'a', 'SecretAccessKey': 'b',"
            " 'Expiration': '2001-01-01T00:00:00Z'}))",
            "printed credentials that expired at 2001-01-01T00:00:00+00:00",
        ),
        ("sys.stdout.write('x' * 200000)", "printed more than 65536 bytes (stopped)"),
    ],
)
def test_a_bad_process_is_one_line_naming_the_profile_and_the_cause(tmp_path: Path, body: str, cause: str) -> None:
    with pytest.raises(AwsCredentialsError) as failure:
        ProcessCredentials(script(tmp_path, body + "\n"), "ci")()
    message = str(failure.value)
    assert "\n" not in message
    assert message.startswith("credential_process of AWS profile 'ci' ")
    assert cause in message


def test_a_hanging_process_is_stopped_with_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    body = (
        "import subprocess\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    provider = ProcessCredentials(script(tmp_path, body), "ci", timeout_seconds=1.5)
    started = time.monotonic()
    with pytest.raises(
        AwsCredentialsError, match=r"^credential_process of AWS profile 'ci' did not finish within 1.5 s"
    ):
        provider()
    assert time.monotonic() - started < 5
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and alive(child):
        time.sleep(0.05)
    assert not alive(child)  # its process group was stopped, not only the process itself


def test_a_process_whose_child_keeps_the_pipe_open_is_bounded_too(tmp_path: Path) -> None:
    body = (
        "import subprocess\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(json.dumps({'Version': 1, 'AccessKeyId': 'a', 'SecretAccessKey': 'b'}))\n"
    )
    provider = ProcessCredentials(script(tmp_path, body), "ci", timeout_seconds=1.5)
    with pytest.raises(AwsCredentialsError, match=r"did not finish within 1\.5 s"):
        provider()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent, which was killed too) counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return True


@pytest.mark.parametrize(
    ("command", "cause"),
    [
        ("", "is empty"),
        ("'unbalanced", "cannot be split into words (No closing quotation)"),
        ("/nonexistent/aws-broker --profile x", "names a program that does not exist: '/nonexistent/aws-broker'"),
        # No shell runs the command: shell syntax reaches the program as words and does nothing.
        ("echo $(id) > /tmp/x", "printed 15 bytes that are not JSON"),
    ],
)
def test_commands_are_split_not_given_to_a_shell(command: str, cause: str) -> None:
    with pytest.raises(AwsCredentialsError) as failure:
        ProcessCredentials(command, "ci")()
    assert str(failure.value) == f"credential_process of AWS profile 'ci' {cause}"


# The shared files -------------------------------------------------------------------------------


def files(tmp_path: Path, credentials: str = "", config: str = "", **environ: str) -> dict[str, str]:
    (tmp_path / "credentials").write_text(credentials)
    (tmp_path / "config").write_text(config)
    return {
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "HOME": str(tmp_path),
        **environ,
    }


def test_credential_process_in_the_config_profile(tmp_path: Path) -> None:
    command = printing(tmp_path, {"Version": 1, **KEYS})
    environ = files(
        tmp_path, config=f"[profile ci]\nregion = eu-west-1\ncredential_process = {command}\n", AWS_PROFILE="ci"
    )
    settings = s3_settings(environ)
    assert settings.config == {"region": "eu-west-1"}  # no static keys beside the provider
    assert settings.credential_provider is not None
    assert settings.credential_provider()["access_key_id"] == "AKIDEXAMPLE"


def test_credential_process_in_the_credentials_file(tmp_path: Path) -> None:
    command = printing(tmp_path, {"Version": 1, **KEYS})
    settings = s3_settings(files(tmp_path, credentials=f"[default]\ncredential_process = {command}\n"))
    assert settings.credential_provider is not None


def test_static_keys_in_the_credentials_file_win_over_the_process(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    command = printing(tmp_path, {"Version": 1, **KEYS}, runs=runs)
    environ = files(
        tmp_path,
        credentials="[default]\naws_access_key_id = static\naws_secret_access_key = static-secret\n",
        config=f"[default]\ncredential_process = {command}\n",
    )
    settings = s3_settings(environ)
    assert settings.credential_provider is None
    assert settings.config == {"access_key_id": "static", "secret_access_key": "static-secret"}
    assert not runs.exists()


def test_the_process_wins_over_static_keys_in_the_config_file(tmp_path: Path) -> None:
    command = printing(tmp_path, {"Version": 1, **KEYS})
    config = f"[default]\naws_access_key_id = static\naws_secret_access_key = s\ncredential_process = {command}\n"
    settings = s3_settings(files(tmp_path, config=config))
    assert settings.credential_provider is not None
    assert "access_key_id" not in settings.config


@pytest.mark.parametrize("variable", ["AWS_ACCESS_KEY_ID", "AWS_WEB_IDENTITY_TOKEN_FILE"])
def test_credentials_in_the_environment_win_over_any_profile(tmp_path: Path, variable: str) -> None:
    runs = tmp_path / "runs"
    command = printing(tmp_path, {"Version": 1, **KEYS}, runs=runs)
    config = f"[default]\nregion = eu-west-1\ncredential_process = {command}\nsso_session = corp\n"
    settings = s3_settings(files(tmp_path, config=config, **{variable: "set"}))
    assert settings == type(settings)({"region": "eu-west-1"})  # obstore finds the credentials itself
    assert not runs.exists()


def test_a_failing_process_is_reported_when_the_settings_are_read(tmp_path: Path) -> None:
    command = script(tmp_path, "sys.exit('no session: run aws sso login')\n")
    with pytest.raises(AwsCredentialsError) as failure:
        s3_settings(files(tmp_path, config=f"[default]\ncredential_process = {command}\n"))
    assert str(failure.value) == (
        "credential_process of AWS profile 'default' exited with 1: no session: run aws sso login"
    )


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        (
            "sso_session = corp\nsso_account_id = 1\nsso_role_name = r\n",
            "AWS profile 'dev' signs in with SSO (sso_session), which skillwire does not follow; make a profile"
            " with `credential_process = aws configure export-credentials --profile dev --format process`"
            " (after `aws sso login`) and set AWS_PROFILE to it",
        ),
        ("sso_start_url = https://corp.awsapps.com/start\n", "AWS profile 'dev' signs in with SSO (sso_start_url)"),
        (
            "role_arn = arn:aws:iam::1:role/r\nsource_profile = base\n",
            "AWS profile 'dev' assumes a role (role_arn), which skillwire does not follow; make a profile with"
            " `credential_process = aws configure export-credentials --profile dev --format process`",
        ),
        (
            "role_arn = arn:aws:iam::1:role/r\nweb_identity_token_file = /var/run/token\n",
            "AWS profile 'dev' uses web identity (web_identity_token_file), which skillwire does not read from a"
            " profile; set AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN instead (obstore follows those)",
        ),
    ],
)
def test_service_profiles_fail_with_the_key_and_the_work_around(tmp_path: Path, profile: str, expected: str) -> None:
    with pytest.raises(AwsCredentialsError) as failure:
        s3_settings(files(tmp_path, config=f"[profile dev]\n{profile}", AWS_PROFILE="dev"))
    assert str(failure.value).startswith(expected)
    assert "\n" not in str(failure.value)


def test_missing_files_and_no_credentials_is_one_line_naming_the_variables(tmp_path: Path) -> None:
    # Issue 23: no keys anywhere used to send obstore to the cloud metadata service (a 403 from
    # 169.254.169.254 on a laptop); now it is one line naming what is missing, and metadata is not asked.
    environ = {"HOME": str(tmp_path), "AWS_DEFAULT_REGION": "ap-south-1"}
    with pytest.raises(AwsCredentialsError) as failure:
        s3_settings(environ)
    message = str(failure.value)
    assert "\n" not in message
    assert "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY" in message
    assert "instance metadata is not asked" in message
    # Keys in the environment are enough (the region still comes from AWS_DEFAULT_REGION).
    keyed = {**environ, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
    assert s3_settings(keyed).config.get("region") == "ap-south-1"


def test_provider_failure_finds_the_message_in_obstores_error() -> None:
    obstore_line = (
        "The operation lacked valid authentication credentials for path External AWS credential provider: "
        "AwsCredentialsError: credential_process of AWS profile 'ci' exited with 3: boom"
    )
    assert provider_failure(obstore_line) == "credential_process of AWS profile 'ci' exited with 3: boom"
    assert provider_failure("Generic S3 error: connection refused") is None


def test_the_json_is_what_the_aws_cli_prints(tmp_path: Path) -> None:
    """The shape `aws configure export-credentials --format process` prints (AWS CLI v2 docs)."""
    payload = {"Version": 1, **KEYS, "Expiration": "2999-01-01T00:00:00+00:00"}
    credential = ProcessCredentials(script(tmp_path, f"print(json.dumps({json.dumps(payload)}, indent=2))\n"), "p")()
    assert credential["expires_at"] == datetime(2999, 1, 1, tzinfo=UTC)


def test_a_named_profile_that_is_nowhere_is_an_error(tmp_path: Path) -> None:
    environ = files(tmp_path, config="[profile other]\nregion = eu-west-1\n", AWS_PROFILE="typo")
    with pytest.raises(AwsCredentialsError) as failure:
        s3_settings(environ)
    assert str(failure.value) == (
        "AWS profile 'typo' (from AWS_PROFILE) is in neither the credentials file nor the config file"
    )
    # The default profile may be absent: then nothing comes from the files, and with no keys elsewhere
    # that is the one-line "no credentials" error, not a profile error.
    with pytest.raises(AwsCredentialsError, match=r"^no credentials: "):
        s3_settings(files(tmp_path))


def test_container_credentials_come_after_the_profile(tmp_path: Path) -> None:
    """As for the AWS CLI: ECS/EKS container credentials are used only when the profile has none."""
    command = printing(tmp_path, {"Version": 1, **KEYS})
    environ = files(
        tmp_path,
        config=f"[default]\ncredential_process = {command}\n",
        AWS_CONTAINER_CREDENTIALS_FULL_URI="http://127.0.0.1:1/creds",
    )
    assert s3_settings(environ).credential_provider is not None
