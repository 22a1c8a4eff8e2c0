#!/usr/bin/python3
"""Checks deploy/ against the built binaries.

Each check is one JUnit case in $XML_OUTPUT_FILE (Bazel's test.xml):
  - every Kubernetes manifest parses as YAML and names apiVersion/kind/name;
  - every kustomization's resources and patch files exist, each patch's target
    is a resource of the kustomization, and its JSON 6902 operations apply
    (the overlays are built here the way kustomize would, for the checks
    below);
  - every command-line flag named in the manifests, the systemd units and the
    Dockerfile is one the binary defines (--helpfull of the absl binaries,
    --help of ringctl and its subcommands), and the absl binaries accept the
    command lines as written (parsed with --helpfull appended);
  - every port named is the coordinator's (--listen, else its default):
    container ports, gRPC probes, Service targets, the workers' coordinator
    address, the PyTorchJob master port, EXPOSE, the environment files;
  - GPU workers ask for nvidia.com/gpu: 1 with --device=cuda:0, the CPU overlay
    for no GPU with --device=cpu;
  - `systemd-analyze verify` accepts the units (ExecStart pointed at the built
    binaries); skipped when systemd-analyze is missing;
  - preemption (issue 34): every pod that runs a worker gives it more than the
    worker's --preempt_grace (as the command line sets it, else the flag's
    default) before SIGKILL (terminationGracePeriodSeconds), so does every
    worker unit (KillSignal=SIGTERM, TimeoutStopSec) and the coordinator unit
    its --drain_grace; the Slurm batch script's --signal comes earlier than
    that grace and its coordinator drains longer; the PyTorchJob restarts a
    preempted worker (restartPolicy ExitCode, --preempted_exit_code 128-255).
Usage: check_deploy.py COORDINATOR WORKER RINGCTL (paths of the binaries),
run from the workspace root (Bazel's runfiles directory).
"""
import copy
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import traceback
import xml.etree.ElementTree as ET

import yaml

DEPLOY = "deploy"
K8S = os.path.join(DEPLOY, "k8s")
SYSTEMD = os.path.join(DEPLOY, "systemd")
DOCKERFILE = os.path.join(DEPLOY, "docker", "Dockerfile")
SBATCH = os.path.join(DEPLOY, "slurm", "ringleader.sbatch")
KUSTOMIZATIONS = ["base", "overlays/cpu", "pytorchjob"]
# What the coordinator reports health for (coordinator/server/coordinator_server.cc).
HEALTH_SERVICES = {"", "ringleader.v1.WorkerService", "ringleader.v1.UserService"}


class Skip(Exception):
    pass


def fail(msg):
    raise AssertionError(msg)


# ---------------------------------------------------------------- binaries


class Binaries:
    def __init__(self, coordinator, worker, ringctl):
        self.paths = {
            "ringleader-coordinator": os.path.abspath(coordinator),
            "ringleader-worker": os.path.abspath(worker),
            "ringctl": os.path.abspath(ringctl),
        }
        self.absl = {n: self._absl_flags(self.paths[n])
                     for n in ("ringleader-coordinator", "ringleader-worker")}
        self.ringctl_global, self.ringctl_sub = self._cli11_flags(
            self.paths["ringctl"])

    @staticmethod
    def _run(argv):
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=120, text=True)
        return r.returncode, r.stdout

    def _absl_flags(self, path):
        _, out = self._run([path, "--helpfull"])
        text = " ".join(out.split())
        flags = {}
        for m in re.finditer(r"--([A-Za-z0-9_]+) \(.*?\); default: (.*?);", text):
            flags[m.group(1)] = m.group(2).strip('"')
        if "listen" not in flags and "device" not in flags:
            fail(f"{path} --helpfull listed no flags:\n{out}")
        return flags

    def _cli11_flags(self, path):
        _, out = self._run([path, "--help"])
        top = set(re.findall(r"--([A-Za-z0-9_]+)", out.split("Subcommands:")[0]))
        subs = {}
        if "Subcommands:" in out:
            for line in out.split("Subcommands:")[1].splitlines():
                m = re.match(r"\s+([a-z]+)\s", line)
                if m:
                    _, sub_out = self._run([path, m.group(1), "--help"])
                    subs[m.group(1)] = set(re.findall(r"--([A-Za-z0-9_]+)", sub_out))
        if "coordinator" not in top or "submit" not in subs:
            fail(f"cannot read ringctl's flags from --help:\n{out}")
        return top, subs

    def check_invocation(self, inv, where):
        """Flag names (and, for absl binaries, values) of one command line."""
        name, args = inv["binary"], inv["args"]
        flags = [a for a in args if a.startswith("--")]
        if name == "ringctl":
            sub = next((a for a in args if not a.startswith("-")), None)
            if sub not in self.ringctl_sub:
                fail(f"{where}: ringctl subcommand {sub!r} does not exist")
            known = self.ringctl_global | self.ringctl_sub[sub]
            for f in flags:
                if f[2:].split("=")[0] not in known:
                    fail(f"{where}: ringctl {sub} has no flag {f}")
            return
        known = self.absl[name]
        for f in flags:
            if f[2:].split("=")[0] not in known:
                fail(f"{where}: {name} has no flag {f.split('=')[0]} "
                     f"(it has {', '.join(sorted(known))})")
        # absl parses every flag (type and value) before acting on --helpfull.
        rc, out = self._run([self.paths[name]] + flags + ["--helpfull"])
        if "ERROR" in out.split("\n", 1)[0] or re.search(r"^ERROR", out, re.M):
            fail(f"{where}: {name} rejects {' '.join(flags)}:\n"
                 f"{out.splitlines()[0] if out else rc}")


def invocations_of(argv, env=None):
    """Ringleader command lines in an argv (a shell -c script is split)."""
    env = env or {}

    def expand(s):
        # Kubernetes $(VAR) and systemd ${VAR} references.
        s = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                   lambda m: env.get(m.group(1), m.group(0)), s)
        return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                      lambda m: env.get(m.group(1), m.group(0)), s)

    argv = [expand(a) for a in argv]
    if len(argv) >= 3 and os.path.basename(argv[0]) in ("sh", "bash") \
            and argv[1] == "-c":
        tokens = shlex.split(argv[2])
        argv, commands = [], [[]]
        for t in tokens:
            if t in ("&&", "||", ";", "|"):
                commands.append([])
            elif t != "exec":
                commands[-1].append(t)
        return [inv for c in commands for inv in invocations_of(c, env)]
    if argv and os.path.basename(argv[0]) in (
            "ringleader-coordinator", "ringleader-worker", "ringctl"):
        return [{"binary": os.path.basename(argv[0]), "args": argv[1:]}]
    return []


def flag_value(inv, name):
    for a in inv["args"]:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return None


def seconds(text, where):
    """An absl duration ("30s", "1m30s", "500ms") or a systemd time span
    ("45s", "2min", "60") in seconds."""
    text = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    units = {"h": 3600, "min": 60, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6,
             "ns": 1e-9}
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*(min|ms|us|ns|h|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text.replace(" ", ""):
        fail(f"{where}: cannot read {text!r} as a duration")
    return sum(float(n) * units[u] for n, u in parts)


def split_hostport(value, where):
    m = re.fullmatch(r"(\[[^\]]*\]|[^:]*):(\d+)", value or "")
    if not m:
        fail(f"{where}: {value!r} is not HOST:PORT")
    return m.group(1), int(m.group(2))


# ---------------------------------------------------------------- kustomize


def load_yaml_docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def pointer(path):
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def apply_json6902(doc, ops, where):
    doc = copy.deepcopy(doc)
    for op in ops:
        parts = pointer(op["path"])
        parent = doc
        for p in parts[:-1]:
            try:
                parent = parent[int(p)] if isinstance(parent, list) else parent[p]
            except (KeyError, IndexError, ValueError):
                fail(f"{where}: {op['op']} {op['path']}: {p} does not exist")
        last = parts[-1]
        if isinstance(parent, list):
            idx = len(parent) if last == "-" else int(last)
            if op["op"] == "add":
                parent.insert(idx, op["value"])
            elif idx >= len(parent):
                fail(f"{where}: {op['op']} {op['path']}: no element {idx}")
            elif op["op"] == "replace":
                parent[idx] = op["value"]
            elif op["op"] == "remove":
                del parent[idx]
        else:
            if op["op"] in ("replace", "remove") and last not in parent:
                fail(f"{where}: {op['op']} {op['path']}: {last} does not exist")
            if op["op"] == "remove":
                del parent[last]
            elif op["op"] in ("add", "replace"):
                parent[last] = op["value"]
            else:
                fail(f"{where}: unsupported op {op['op']}")
    return doc


def matches(doc, target):
    group, _, version = doc["apiVersion"].rpartition("/")
    return (target.get("kind", doc["kind"]) == doc["kind"]
            and target.get("name", doc["metadata"]["name"]) == doc["metadata"]["name"]
            and target.get("group", group) == group
            and target.get("version", version) == version)


def build(kdir):
    """The resources of the kustomization in `kdir`, with its patches."""
    kfile = os.path.join(kdir, "kustomization.yaml")
    if not os.path.isfile(kfile):
        fail(f"{kdir}: no kustomization.yaml")
    k = load_yaml_docs(kfile)[0]
    docs = []
    for r in k.get("resources", []):
        p = os.path.normpath(os.path.join(kdir, r))
        if os.path.isdir(p):
            docs += build(p)
        elif os.path.isfile(p):
            docs += load_yaml_docs(p)
        else:
            fail(f"{kfile}: resource {r} does not exist")
    for patch in k.get("patches", []):
        if "path" in patch:
            p = os.path.join(kdir, patch["path"])
            if not os.path.isfile(p):
                fail(f"{kfile}: patch {patch['path']} does not exist")
            body = load_yaml_docs(p)[0]
        else:
            body = yaml.safe_load(patch["patch"])
        target = patch.get("target")
        if target is None:  # A strategic-merge patch names its target.
            target = {"kind": body["kind"], "name": body["metadata"]["name"]}
        hits = [i for i, d in enumerate(docs) if matches(d, target)]
        if len(hits) != 1:
            fail(f"{kfile}: patch target {target} matches {len(hits)} resources")
        if isinstance(body, list):
            docs[hits[0]] = apply_json6902(docs[hits[0]], body, kfile)
    images = {i["name"] for i in k.get("images", [])}
    for d in docs:
        for c in containers(d):
            if images and c["image"].split(":")[0] not in images:
                fail(f"{kfile}: container {c['name']} image {c['image']} is not "
                     f"one of images: {sorted(images)}")
    return docs


def pod_specs(doc):
    """(where, pod spec, pod labels) of a workload."""
    kind = doc["kind"]
    name = doc["metadata"]["name"]
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
        t = doc["spec"]["template"]
        yield f"{kind}/{name}", t["spec"], t.get("metadata", {}).get("labels", {})
    elif kind == "PyTorchJob":
        for role, spec in doc["spec"]["pytorchReplicaSpecs"].items():
            t = spec["template"]
            yield (f"{kind}/{name}/{role}", t["spec"],
                   t.get("metadata", {}).get("labels", {}))


def containers(doc):
    for _, spec, _ in pod_specs(doc):
        yield from spec.get("initContainers", []) + spec.get("containers", [])


def container_env(c):
    env = {}
    for e in c.get("env", []):
        env[e["name"]] = str(e["value"]) if "value" in e else "10.0.0.1"
    return env


def container_invocations(c):
    return invocations_of(list(c.get("command", [])) + list(c.get("args", [])),
                          container_env(c))


# ---------------------------------------------------------------- checks


class Checks:
    def __init__(self, binaries):
        self.bin = binaries
        self.coordinator_default_port = split_hostport(
            binaries.absl["ringleader-coordinator"]["listen"], "--listen default")[1]

    def listen_port(self, inv, where, any_host=False):
        value = flag_value(inv, "listen") or \
            self.bin.absl["ringleader-coordinator"]["listen"]
        host, port = split_hostport(value, f"{where} --listen")
        if any_host and host not in ("0.0.0.0", "[::]", ""):
            fail(f"{where}: --listen={value} is not reachable from the pod IP "
                 "(Services and the kubelet's probes); listen on 0.0.0.0")
        return port

    def test_manifests_parse(self):
        n = 0
        for dirpath, _, files in os.walk(K8S):
            for f in sorted(files):
                if not f.endswith((".yaml", ".yml")):
                    continue
                path = os.path.join(dirpath, f)
                try:
                    docs = load_yaml_docs(path)
                except yaml.YAMLError as e:
                    fail(f"{path}: {e}")
                if not docs:
                    fail(f"{path}: empty")
                for d in docs:
                    if isinstance(d, list):  # A JSON 6902 patch.
                        if not all("op" in o and "path" in o for o in d):
                            fail(f"{path}: a patch operation lacks op or path")
                        continue
                    for key in ("apiVersion", "kind"):
                        if key not in d:
                            fail(f"{path}: no {key}")
                    if d["kind"] != "Kustomization" and \
                            not d.get("metadata", {}).get("name"):
                        fail(f"{path}: {d['kind']} without metadata.name")
                n += 1
        if n < 8:
            fail(f"only {n} manifests under {K8S}")

    def built(self):
        return {k: build(os.path.join(K8S, k)) for k in KUSTOMIZATIONS}

    def test_kustomizations(self):
        built = self.built()
        # Every manifest is used by some kustomization.
        used = set()
        for k in KUSTOMIZATIONS:
            kdir = os.path.join(K8S, k)
            doc = load_yaml_docs(os.path.join(kdir, "kustomization.yaml"))[0]
            used |= {os.path.normpath(os.path.join(kdir, r))
                     for r in doc.get("resources", [])}
            used |= {os.path.normpath(os.path.join(kdir, p["path"]))
                     for p in doc.get("patches", []) if "path" in p}
        for dirpath, _, files in os.walk(K8S):
            for f in files:
                p = os.path.normpath(os.path.join(dirpath, f))
                if f != "kustomization.yaml" and p not in used:
                    fail(f"{p} is in no kustomization")
        kinds = {k: sorted(d["kind"] for d in docs) for k, docs in built.items()}
        for want in ("Deployment", "Service", "PersistentVolumeClaim", "StatefulSet"):
            if want not in kinds["base"]:
                fail(f"base has no {want}: {kinds['base']}")
        if kinds["overlays/cpu"] != kinds["base"]:
            fail("the CPU overlay changes which resources exist")

    def all_invocations(self):
        """(where, invocation, container or None) everywhere."""
        out = []
        for k, docs in self.built().items():
            for d in docs:
                for where, spec, _ in pod_specs(d):
                    for c in spec.get("initContainers", []) + spec["containers"]:
                        for inv in container_invocations(c):
                            out.append((f"{k}: {where}/{c['name']}", inv, c))
        for unit, inv in self.unit_invocations():
            out.append((unit, inv, None))
        for inv in self.dockerfile_invocations():
            out.append((DOCKERFILE, inv, None))
        return out

    @staticmethod
    def unit_env(path):
        env = {}
        for line in open(path):
            m = re.match(r"Environment=([A-Za-z_0-9]+)=(.*)", line.strip())
            if m:
                env[m.group(1)] = m.group(2)
            m = re.match(r"EnvironmentFile=-?(.*)", line.strip())
            if m:
                example = os.path.join(
                    SYSTEMD, os.path.basename(m.group(1)) + ".example")
                if not os.path.isfile(example):
                    fail(f"{path}: {m.group(1)} has no example {example}")
                for l in open(example):
                    m2 = re.match(r"([A-Za-z_0-9]+)=(.*)", l.strip())
                    if m2:
                        env[m2.group(1)] = m2.group(2)
        return env

    def unit_invocations(self):
        out = []
        for f in sorted(os.listdir(SYSTEMD)):
            if not f.endswith(".service"):
                continue
            path = os.path.join(SYSTEMD, f)
            env = self.unit_env(path)
            execs = [l.strip()[len("ExecStart="):] for l in open(path)
                     if l.startswith("ExecStart=")]
            if len(execs) != 1:
                fail(f"{path}: {len(execs)} ExecStart= lines")
            argv = shlex.split(execs[0].lstrip("-@:+!").replace("%i", "0"))
            invs = invocations_of(argv, env)
            if not invs:
                fail(f"{path}: ExecStart runs no Ringleader binary: {execs[0]}")
            out += [(path, inv) for inv in invs]
        return out

    @staticmethod
    def dockerfile_invocations():
        out = []
        for line in open(DOCKERFILE):
            m = re.match(r"(CMD|ENTRYPOINT)\s+(\[.*\])", line.strip())
            if m:
                out += invocations_of(yaml.safe_load(m.group(2)))
        if not out:
            fail(f"{DOCKERFILE}: no CMD/ENTRYPOINT runs a Ringleader binary")
        return out

    def test_flags_exist(self):
        n = 0
        for where, inv, _ in self.all_invocations():
            self.bin.check_invocation(inv, where)
            n += 1
        if n < 10:
            fail(f"only {n} command lines found")

    def test_ports(self):
        built = self.built()
        for k, docs in built.items():
            services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
            coordinators = []  # (listen port, pod labels, named ports)
            for d in docs:
                for where, spec, labels in pod_specs(d):
                    where = f"{k}: {where}"
                    cs = spec.get("initContainers", []) + spec["containers"]
                    named = {p.get("name"): p["containerPort"]
                             for c in cs for p in c.get("ports", [])}
                    for c in cs:
                        for inv in container_invocations(c):
                            if inv["binary"] != "ringleader-coordinator":
                                continue
                            port = self.listen_port(inv, where, any_host=True)
                            if port not in named.values():
                                fail(f"{where}: no containerPort {port} (--listen)")
                            probes = [c.get(p) for p in
                                      ("startupProbe", "readinessProbe", "livenessProbe")]
                            probes = [p for p in probes if p]
                            if not any("grpc" in p for p in probes) or \
                                    "livenessProbe" not in c:
                                fail(f"{where}/{c['name']}: needs gRPC liveness "
                                     "and readiness/startup probes")
                            for p in probes:
                                if "grpc" not in p:
                                    continue
                                pp = p["grpc"]["port"]
                                pp = named.get(pp, pp)
                                if pp != port:
                                    fail(f"{where}: gRPC probe on {pp}, --listen {port}")
                                if p["grpc"].get("service", "") not in HEALTH_SERVICES:
                                    fail(f"{where}: probe service "
                                         f"{p['grpc']['service']} is not reported")
                            coordinators.append((port, labels, named))
                    if d["kind"] == "PyTorchJob" and where.endswith("/Master"):
                        master = named.get("pytorchjob-port", 23456)
                        if not any(m[0] == master for m in coordinators):
                            fail(f"{where}: MASTER_PORT {master} is not the "
                                 "coordinator's --listen port")
            # Services that select a coordinator pod target its port.
            coord_services = {}
            for name, svc in services.items():
                sel = svc["spec"].get("selector", {})
                for port, labels, named in coordinators:
                    if sel and all(labels.get(a) == b for a, b in sel.items()):
                        for sp in svc["spec"]["ports"]:
                            t = sp.get("targetPort", sp["port"])
                            if named.get(t, t) != port:
                                fail(f"{k}: Service {name} targets {t}, the "
                                     f"coordinator listens on {port}")
                            coord_services[name] = sp["port"]
            # Workers and ringctl dial a coordinator's Service (or, in a
            # PyTorchJob, the master's port).
            for d in docs:
                for where, spec, _ in pod_specs(d):
                    for c in spec.get("initContainers", []) + spec["containers"]:
                        env = container_env(c)
                        for inv in container_invocations(c):
                            addr = flag_value(inv, "coordinator") or (
                                env.get("RINGLEADER_COORDINATOR")
                                if inv["binary"] == "ringleader-worker" else None)
                            if addr is None:
                                if inv["binary"] == "ringleader-worker" and \
                                        d["kind"] != "PyTorchJob":
                                    fail(f"{k}: {where}: the worker is not told "
                                         "where the coordinator is")
                                continue
                            host, port = split_hostport(addr, f"{k}: {where}")
                            if host in ("127.0.0.1", "localhost"):
                                ok = any(m[0] == port for m in coordinators)
                            else:
                                ok = coord_services.get(host.split(".")[0]) == port
                            if not ok:
                                fail(f"{k}: {where}: {inv['binary']} dials {addr}, "
                                     f"no coordinator there ({coord_services})")
        # systemd: the environment files agree with the coordinator's port.
        ports = set()
        for path, inv in self.unit_invocations():
            if inv["binary"] == "ringleader-coordinator":
                ports.add(self.listen_port(inv, path))
        worker_env = self.unit_env(os.path.join(SYSTEMD, "ringleader-worker@.service"))
        ports.add(split_hostport(worker_env["RINGLEADER_COORDINATOR"], "worker.env")[1])
        # Docker: EXPOSE is what CMD listens on.
        exposed = {int(p) for l in open(DOCKERFILE)
                   for p in re.findall(r"^EXPOSE\s+(\d+)", l)}
        for inv in self.dockerfile_invocations():
            if inv["binary"] == "ringleader-coordinator":
                port = self.listen_port(inv, DOCKERFILE, any_host=True)
                if port not in exposed:
                    fail(f"{DOCKERFILE}: listens on {port}, EXPOSEs {exposed}")
                ports.add(port)
        ports.add(self.coordinator_default_port)
        if len(ports) != 1:
            fail(f"systemd, Docker and the default disagree on the port: {ports}")

    def test_devices(self):
        built = self.built()
        for k, docs in built.items():
            for d in docs:
                for where, spec, _ in pod_specs(d):
                    for c in spec.get("initContainers", []) + spec["containers"]:
                        gpus = c.get("resources", {}).get("limits", {}).get(
                            "nvidia.com/gpu")
                        for inv in container_invocations(c):
                            if inv["binary"] != "ringleader-worker":
                                continue
                            device = flag_value(inv, "device") or \
                                self.bin.absl["ringleader-worker"]["device"]
                            want = "cpu" if k == "overlays/cpu" else "cuda:0"
                            if device != want:
                                fail(f"{k}: {where}: --device={device}, want {want}")
                            if want == "cpu" and gpus is not None:
                                fail(f"{k}: {where}: a CPU worker asks for GPUs")
                            if want != "cpu" and gpus != 1:
                                fail(f"{k}: {where}: nvidia.com/gpu is {gpus}, want 1")
        for path, inv in self.unit_invocations():
            device = flag_value(inv, "device")
            want = "cpu" if "-cpu@" in path else "cuda:0"  # %i is 0 here.
            if inv["binary"] == "ringleader-worker" and device != want:
                fail(f"{path}: --device={device}, want {want} for instance 0")

    def grace_of(self, inv, where):
        """The worker's --preempt_grace on this command line, in seconds."""
        value = flag_value(inv, "preempt_grace") or \
            self.bin.absl["ringleader-worker"]["preempt_grace"]
        return seconds(value, f"{where} --preempt_grace")

    def test_preemption_grace_k8s(self):
        n = 0
        for k, docs in self.built().items():
            for d in docs:
                for where, spec, _ in pod_specs(d):
                    invs = [inv for c in spec.get("initContainers", []) +
                            spec["containers"] for inv in container_invocations(c)
                            if inv["binary"] == "ringleader-worker"]
                    if not invs:
                        continue
                    # Kubernetes' default is 30 s: no more than the grace.
                    pod = spec.get("terminationGracePeriodSeconds", 30)
                    for inv in invs:
                        grace = self.grace_of(inv, f"{k}: {where}")
                        if pod <= grace:
                            fail(f"{k}: {where}: terminationGracePeriodSeconds "
                                 f"{pod} is not above the worker's "
                                 f"--preempt_grace ({grace:g} s): SIGKILL "
                                 "would come before its checkpoint")
                        n += 1
                    if d["kind"] == "PyTorchJob":
                        role = where.rsplit("/", 1)[1]
                        policy = d["spec"]["pytorchReplicaSpecs"][role].get(
                            "restartPolicy")
                        if policy != "ExitCode":
                            fail(f"{k}: {where}: restartPolicy {policy}: a "
                                 "preempted worker is not recreated (ExitCode "
                                 "retries 128-255)")
                        for inv in invs:
                            code = flag_value(inv, "preempted_exit_code")
                            if code is None or not 128 <= int(code) <= 255:
                                fail(f"{k}: {where}: --preempted_exit_code="
                                     f"{code}: ExitCode would not retry it")
        if n < 3:
            fail(f"only {n} worker pods found")

    @staticmethod
    def unit_setting(text, key):
        values = re.findall(rf"^{key}=(.*)$", text, re.M)
        return values[-1].strip() if values else None

    def test_preemption_grace_systemd(self):
        for path, inv in self.unit_invocations():
            text = open(path).read()
            name = os.path.basename(path)
            if self.unit_setting(text, "KillSignal") not in ("SIGTERM", "TERM"):
                fail(f"{name}: KillSignal must be SIGTERM (the preemption)")
            stop = self.unit_setting(text, "TimeoutStopSec")
            if stop is None:
                fail(f"{name}: no TimeoutStopSec")
            stop_s = seconds(stop, f"{name} TimeoutStopSec")
            if inv["binary"] == "ringleader-worker":
                need, what = self.grace_of(inv, name), "--preempt_grace"
            else:
                value = flag_value(inv, "drain_grace") or \
                    self.bin.absl["ringleader-coordinator"]["drain_grace"]
                need, what = seconds(value, f"{name} --drain_grace"), \
                    "--drain_grace"
            if stop_s <= need:
                fail(f"{name}: TimeoutStopSec={stop} is not above its "
                     f"{what} ({need:g} s)")

    def test_preemption_grace_slurm(self):
        text = open(SBATCH).read()
        grace = seconds(self.bin.absl["ringleader-worker"]["preempt_grace"],
                        "--preempt_grace default")
        m = re.search(r"^#SBATCH --signal=(?:B:)?(?:TERM|SIGTERM|15)@(\d+)$",
                      text, re.M)
        if not m:
            fail(f"{SBATCH}: no '#SBATCH --signal=TERM@SECONDS'")
        if int(m.group(1)) <= grace:
            fail(f"{SBATCH}: --signal comes {m.group(1)} s before the time "
                 f"limit, not more than --preempt_grace ({grace:g} s)")
        drain = re.search(r"--drain_grace=([0-9.]+[a-z]*)", text)
        if not drain or seconds(drain.group(1), "sbatch --drain_grace") <= grace:
            fail(f"{SBATCH}: the coordinator must drain longer than the "
                 f"workers' --preempt_grace ({grace:g} s)")
        kill_wait = re.search(
            r"KillWait\s*(?:#\s*)?must be above.*?(\d+) s or more", text, re.S)
        if not kill_wait or int(kill_wait.group(1)) <= grace:
            fail(f"{SBATCH}: its note must ask for a KillWait above "
                 f"--preempt_grace ({grace:g} s)")

    def test_systemd_analyze_verify(self):
        analyze = shutil.which("systemd-analyze")
        if analyze is None:
            raise Skip("systemd-analyze is not installed (Debian package systemd)")
        tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        units = []
        for f in sorted(os.listdir(SYSTEMD)):
            if not f.endswith(".service"):
                continue
            text = open(os.path.join(SYSTEMD, f)).read()
            for name, path in self.bin.paths.items():
                text = text.replace(f"/usr/local/bin/{name}", path)
            with open(os.path.join(tmp, f), "w") as out:
                out.write(text)
            units.append(os.path.join(tmp, f.replace("@.service", "@0.service")))
        if len(units) < 3:
            fail(f"only {len(units)} units in {SYSTEMD}")
        r = subprocess.run([analyze, "verify"] + units, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        # It exits 0 for a bad value too: its complaints are on stderr.
        if r.returncode != 0 or r.stderr.strip():
            fail(f"systemd-analyze verify exit {r.returncode}:\n{r.stderr}{r.stdout}")
        for u in units:
            text = open(u.replace("@0.service", "@.service")).read()
            for key in ("Type=notify", "WatchdogSec=", "Restart=on-failure",
                        "NoNewPrivileges=yes", "ProtectSystem=strict",
                        "PrivateTmp=yes"):
                if key not in text:
                    fail(f"{os.path.basename(u)}: no {key}")
            if "ringleader-worker@" in u:
                if "PrivateDevices=yes" in text or "char-nvidia-frontend" not in text:
                    fail(f"{u}: GPU worker cannot reach /dev/nvidia*")


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    checks = None
    results = []  # (name, None | ("failure"|"skipped", message))
    try:
        checks = Checks(Binaries(*argv[1:]))
    except Exception:
        results.append(("binaries", ("failure", traceback.format_exc())))
    if checks is not None:
        for name in sorted(n for n in dir(Checks) if n.startswith("test_")):
            try:
                getattr(checks, name)()
                results.append((name, None))
                print(f"[ OK ] {name}")
            except Skip as e:
                results.append((name, ("skipped", str(e))))
                print(f"[SKIP] {name}: {e}")
            except Exception as e:
                msg = str(e) if isinstance(e, AssertionError) else traceback.format_exc()
                results.append((name, ("failure", msg)))
                print(f"[FAIL] {name}: {msg}")
    failures = sum(1 for _, r in results if r and r[0] == "failure")
    suite = ET.Element("testsuite", name="check_deploy", tests=str(len(results)),
                       failures=str(failures))
    for name, r in results:
        case = ET.SubElement(suite, "testcase", classname="DeployCheck", name=name)
        if r:
            ET.SubElement(case, r[0], message=r[1][:200]).text = r[1]
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        ET.ElementTree(ET.Element("testsuites")).getroot().append(suite)
        root = ET.Element("testsuites")
        root.append(suite)
        ET.ElementTree(root).write(xml, encoding="utf-8", xml_declaration=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
