"""ringleader.Client against a real coordinator: every call, every error."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import time

import pytest
from google.protobuf import json_format

import ringleader
from conftest import REPO

MLP_JOB = REPO / "examples" / "fashion_mnist.textproto"


def test_submit_get_list_cancel_delete(coordinator):
    with coordinator.client() as c:
        job_id = c.submit(MLP_JOB, epochs=1, name="client-calls")
        job = c.get(job_id)
        assert ringleader.state_name(job) == "PENDING"  # No workers.
        assert (job.spec.name, job.spec.epochs) == ("client-calls", 1)
        assert job_id in [j.job_id for j in c.list()]
        assert job_id in [j.job_id for j in c.list(states=["pending"])]
        assert job_id not in [j.job_id for j in c.list(states=["SUCCEEDED"])]
        assert ringleader.state_name(c.cancel(job_id)) == "CANCELLED"
        c.delete(job_id)
        with pytest.raises(ringleader.NotFoundError):
            c.get(job_id)


def test_every_spec_form(coordinator, tmp_path):
    spec = ringleader.load_spec_file(MLP_JOB)
    as_json = tmp_path / "job.json"
    as_json.write_text(json_format.MessageToJson(spec))
    as_dict = json_format.MessageToDict(spec, preserving_proto_field_name=True)
    forms = [spec, as_dict, as_json, str(MLP_JOB)]
    with coordinator.client() as c:
        for form in forms:
            job = c.get(c.submit(form, name="forms", seed=7))
            assert job.spec.dataset.path == spec.dataset.path
            assert (job.spec.seed, job.spec.epochs) == (7, spec.epochs)
            c.cancel(job)
        only_keywords = c.submit(
            name="keywords", model={"arch": "mlp"}, format="idx",
            path=spec.dataset.path, optimizer={"kind": "sgd"},
            learning_rate=0.05, epochs=1, batch_size=64, min_workers=1,
            max_workers=1)
        job = c.get(only_keywords)
        assert job.spec.model.arch == spec.model.arch
        assert job.spec.optimizer.learning_rate == 0.05
        c.cancel(only_keywords)


def test_invalid_spec_lists_every_violation(coordinator):
    with coordinator.client() as c:
        before = len(c.list())
        with pytest.raises(ringleader.InvalidSpecError) as err:
            c.submit(MLP_JOB, epochs=-3, learning_rate=-1.0, momentum=1.5)
        assert len(c.list()) == before  # Nothing was submitted.
    violations = err.value.violations
    assert len(violations) == 3, violations
    for field in ("epochs", "optimizer.learning_rate", "optimizer.momentum"):
        assert any(v.startswith(f"invalid job spec: {field} ") for v in violations)
    assert isinstance(err.value, ValueError)


def test_spec_mistakes_raise_before_sending(coordinator, tmp_path):
    bad_text = tmp_path / "bad.textproto"
    bad_text.write_text("epochs: 2\nbatchsize: 3\n")
    with coordinator.client() as c:
        for call, words in [
            (lambda: c.submit(MLP_JOB, epoch=2), "unknown keyword 'epoch'"),
            (lambda: c.submit(MLP_JOB, epochs="2"), "takes an integer"),
            (lambda: c.submit(MLP_JOB, optimizer__kind="lion"), "'lion' is not one"),
            (lambda: c.submit(bad_text), "batchsize"),
            (lambda: c.submit(tmp_path / "job.yaml"), "ends in .json"),
            (lambda: c.submit(tmp_path / "none.json"), "no such job file"),
        ]:
            with pytest.raises(ringleader.InvalidSpecError, match=words):
                call()


def test_missing_job_is_not_found(coordinator):
    with coordinator.client() as c:
        for call in (c.get, c.cancel, c.delete):
            with pytest.raises(ringleader.NotFoundError, match="no-such-job-1"):
                call("no-such-job-1")
        with pytest.raises(ringleader.NotFoundError):
            list(c.watch("no-such-job-1"))


def test_deleting_a_live_job_fails(coordinator):
    with coordinator.client() as c:
        job_id = c.submit(MLP_JOB, name="live")
        with pytest.raises(ringleader.FailedPreconditionError, match="cancel"):
            c.delete(job_id)
        c.cancel(job_id)
        c.delete(job_id)


def test_watch_ends_with_the_final_snapshot(coordinator):
    with coordinator.client() as c:
        job_id = c.submit(MLP_JOB, name="watched")
        seen = []
        for job in c.watch(job_id):
            seen.append(ringleader.state_name(job))
            if len(seen) == 1:
                c.cancel(job_id)
        assert seen[0] == "PENDING" and seen[-1] == "CANCELLED"
        with pytest.raises(ringleader.JobCancelledError) as err:
            c.wait(job_id)
        assert err.value.job_id == job_id and err.value.state == "CANCELLED"


def test_unreachable_coordinator_says_so_within_the_timeout():
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # Nobody listens: refused at once.
    with ringleader.Client(f"127.0.0.1:{port}", timeout=2) as c:
        with pytest.raises(ringleader.CoordinatorUnavailableError,
                           match=f"cannot reach coordinator at 127.0.0.1:{port}"):
            c.workers()
    # Accepts TCP (the kernel's backlog) but never speaks HTTP/2.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        with ringleader.Client(address, timeout=1) as c:
            start = time.monotonic()
            with pytest.raises(ringleader.CoordinatorUnavailableError,
                               match="cannot reach"):
                c.list()
            assert time.monotonic() - start < 5


def test_default_address_from_the_environment(monkeypatch):
    monkeypatch.setenv("RINGLEADER_COORDINATOR", "10.1.2.3:7171")
    assert ringleader.Client().address == "10.1.2.3:7171"
    monkeypatch.delenv("RINGLEADER_COORDINATOR")
    assert ringleader.Client().address == "127.0.0.1:7070"


def test_workers_and_a_failed_job_naming_rank_and_reason(cluster, tmp_path):
    with cluster.client() as c:
        workers = c.workers()
        assert sorted(w.pid for w in workers) == sorted(cluster.pids()[1:])
        assert all(w.device == "cpu" for w in workers)
        missing = tmp_path / "missing-model.pt"
        job_id = c.submit(MLP_JOB, name="fails", model={
            "arch": "torchscript", "torchscript_path": str(missing)})
        with pytest.raises(ringleader.JobFailedError) as err:
            c.wait(job_id)
    e = err.value
    assert e.job_id == job_id and e.state == "FAILED"
    assert e.rank in (0, 1)
    assert str(missing) in e.reason and f"rank {e.rank}" in str(e)


def _whole_log(c: ringleader.Client, job_id: str, workers: int):
    """The job's log once each worker's last line of a failed job, its error
    ("job <id>: ..."), is in: a worker's last lines reach the coordinator a
    moment after the job's final state. At most 30 s."""
    deadline = time.monotonic() + 30
    while True:
        lines = list(c.logs(job_id))
        ends = [line for line in lines
                if line.text.startswith(f"job {job_id}: ")]
        if len(ends) >= workers or time.monotonic() > deadline:
            return lines
        time.sleep(0.1)


def test_logs_of_a_failed_job_by_rank_tail_and_follow(cluster, tmp_path):
    with cluster.client() as c:
        missing = tmp_path / "no-model-here.pt"
        job_id = c.submit(MLP_JOB, name="logged", min_workers=2, model={
            "arch": "torchscript", "torchscript_path": str(missing)})
        with pytest.raises(ringleader.JobFailedError):
            c.wait(job_id)
        lines = _whole_log(c, job_id, workers=2)
        assert any(str(missing) in line.text for line in lines), \
            "\n".join(map(ringleader.format_log_line, lines))
        assert [line.time_ms for line in lines] == \
            sorted(line.time_ms for line in lines)
        assert {line.host for line in lines} == {socket.gethostname()}
        assert len({line.worker_id for line in lines}) == 2
        text = ringleader.format_log_line(lines[-1])
        assert re.match(r"^\[(rank \d+ gen \d+|no rank) [^]]+\] "
                        r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{3} ", text), text
        ranked = list(c.logs(job_id, rank=0))
        assert ranked and all(line.rank == 0 for line in ranked)
        assert len(list(c.logs(job_id, tail=2))) == 2
        assert list(c.logs(job_id, since=3600)) == lines
        # Following a finished job ends by itself, with the same lines.
        followed = list(c.logs(job_id, follow=True, poll=0.05, linger=0.2))
        assert followed[:len(lines)] == lines
        with pytest.raises(ringleader.InvalidArgumentError):
            list(c.logs(job_id, tail=-1))
        with pytest.raises(ringleader.InvalidArgumentError):
            list(c.logs(job_id, rank="0"))
        with pytest.raises(ringleader.NotFoundError):
            list(c.logs("no-such-job"))
        c.delete(job_id)
        with pytest.raises(ringleader.NotFoundError):
            list(c.logs(job_id))


def test_token_is_required_for_changes(tmp_path, monkeypatch):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    monkeypatch.delenv("RINGLEADER_TOKEN", raising=False)
    with ringleader.LocalCluster(
            0, coordinator_args=[f"--auth_token_file={token_file}"]) as cl:
        with cl.client() as anonymous:
            assert anonymous.list() == []  # Reads stay open.
            with pytest.raises(ringleader.AuthenticationError):
                anonymous.submit(MLP_JOB)
        with cl.client(token="wrong") as wrong:
            with pytest.raises(ringleader.AuthenticationError):
                wrong.submit(MLP_JOB)
        with cl.client(token_file=str(token_file)) as by_file:
            by_file.cancel(by_file.submit(MLP_JOB))
        monkeypatch.setenv("RINGLEADER_TOKEN", "s3cret")
        with cl.client() as by_env:
            by_env.cancel(by_env.submit(MLP_JOB))
    with pytest.raises(ringleader.Error, match="exclusive"):
        ringleader.Client("127.0.0.1:1", token="a", token_file=str(token_file))


def _openssl(*args: str) -> None:
    subprocess.run(["/usr/bin/openssl", *args], check=True,
                   capture_output=True)


def _test_ca(d) -> dict:
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", f"{d}/ca.key", "-out",
             f"{d}/ca.pem", "-days", "1", "-subj", "/CN=test CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1\n"
                                  "extendedKeyUsage=serverAuth\n")
    _openssl("req", "-new", *ec, "-keyout", f"{d}/server.key", "-out",
             f"{d}/server.csr", "-subj", "/CN=127.0.0.1")
    _openssl("x509", "-req", "-in", f"{d}/server.csr", "-CA", f"{d}/ca.pem",
             "-CAkey", f"{d}/ca.key", "-set_serial", "2", "-days", "1",
             "-extfile", f"{d}/server.ext", "-out", f"{d}/server.pem")
    return {"ca": f"{d}/ca.pem", "cert": f"{d}/server.pem",
            "key": f"{d}/server.key"}


def test_tls(tmp_path):
    pki = _test_ca(tmp_path)
    with ringleader.LocalCluster(0, coordinator_args=[
            f"--tls_cert={pki['cert']}", f"--tls_key={pki['key']}"]) as cl:
        with cl.client(tls_ca=pki["ca"]) as c:
            assert c.workers() == []
            c.cancel(c.submit(MLP_JOB))
        with cl.client(timeout=2) as plain:
            with pytest.raises(ringleader.CoordinatorUnavailableError):
                plain.list()
    with pytest.raises(ringleader.Error, match="tls_ca"):
        ringleader.Client("127.0.0.1:1", tls_ca=str(tmp_path / "no-ca.pem"))


def test_json_of_a_job_round_trips(coordinator):
    with coordinator.client() as c:
        job = c.get(c.submit(MLP_JOB, name="json"))
        c.cancel(job)
    doc = json.loads(json_format.MessageToJson(job))
    assert doc["spec"]["name"] == "json"
