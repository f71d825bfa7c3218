"""A simulated Android device that the REAL adb server reaches with ``adb connect 127.0.0.1:PORT``.

It speaks the adb transport protocol over TCP (:mod:`.protocol`): the CNXN handshake (AUTH skipped by
answering CNXN directly), OPEN / OKAY / WRTE / CLSE streams with the one-write-in-flight flow control,
``shell:`` (v1, raw) and ``shell,v2:`` services, and ``sync:`` for pushes (SEND / DATA / DONE, STAT).

Shell commands simulated: ``getprop``, ``input``, ``wm``, ``log``, ``echo``, ``pm install -r -t`` /
``uninstall`` / ``clear`` / ``list packages [-U]``, ``ps``, ``kill``, ``settings``, ``find ... md5sum``, ``rm``
(the state they read and change: :mod:`.state`), ``am instrument -w -r -e class C#m PKG/RUNNER``,
``am force-stop``, ``logcat -d`` / ``-c``. An "APK" is a jar whose manifest names its package
(``Mobilebench-Package``) and, for a test package, the package under test
(``Mobilebench-Target-Package``). ``am instrument`` with the ``real`` behaviour runs the selected methods
(``-e class C#a,C#b``) on a host JVM through ``MbInstrumentationRunner`` (JUnit 4 from Debian's ``junit4``),
which writes the real instrumentation status protocol to the device's private channel (:mod:`.channel`: what
the process prints goes to logcat; ``Script(status_channel="stdout")`` makes the process's output the stream);
the JVM's heap is capped (:data:`HEAP_LIMIT`, a device's per-app limit) and, as ``am`` does when the instrumented
process dies, a JVM that exits without the final ``INSTRUMENTATION_CODE`` line gets ``INSTRUMENTATION_RESULT:
shortMsg=Process crashed.``.

Scripted behaviours (:class:`Script`): slow boot, offline (never answers CNXN), install failure codes, a
crash mid-test, instrumentation that hangs with no output, canned assertion failure / pass / zero tests.
Every shell command and ``log -t mobilebench`` mark is appended to ``device.log`` (JSON lines) so tests
can assert what happened on the device side.
"""

from __future__ import annotations

import dataclasses
import io
import json
import queue
import shlex
import socket
import struct
import subprocess
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from . import protocol as p
from .channel import run_instrumented
from .state import DeviceState

HERE = Path(__file__).resolve().parent
JUNIT_CP = "/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar"
#: the simulated device's per-app heap limit (``-Xmx`` of the instrumented JVM)
HEAP_LIMIT = "128m"
_RUNNER_LOCK = threading.Lock()


@dataclasses.dataclass
class Script:
    """Scripted behaviour of one simulated device.

    Attributes:
        boot_delay_s: ``sys.boot_completed`` reads empty (and the boot animation runs) this long after start.
        offline: never answer the CNXN handshake (the server keeps the device ``offline``).
        install_failure: ``pm install`` prints ``Failure [<this>]`` (e.g. ``INSTALL_FAILED_INSUFFICIENT_STORAGE``).
        instrument: ``real`` (run the method on a JVM), ``crash`` (process dies after the test starts),
            ``hang`` (no output until force-stopped), ``assertion``, ``pass``, ``zero`` (no test ran).
        scripted_times: the install / instrument behaviour applies to this many calls, then ``real``
            (None: always).
        api_level, abi: ``ro.build.version.sdk`` and ``ro.product.cpu.abi``.
        storage_quota: bytes of shared storage above which installs fail (:mod:`.state`), None: no limit.
        status_channel: ``socket`` (the status stream only from the runner's private channel, :mod:`.channel`;
            what the process prints goes to logcat) or ``stdout`` (the process's output IS the stream: a device
            where code under test can write to it, as ``Instrumentation.sendStatus`` can on a real one).
    """

    boot_delay_s: float = 0.0
    offline: bool = False
    install_failure: str | None = None
    instrument: str = "real"
    scripted_times: int | None = None
    api_level: int = 30
    abi: str = "x86_64"
    storage_quota: int | None = None
    status_channel: str = "socket"


def compile_runner(cache: Path) -> Path:
    """Compile ``MbInstrumentationRunner.java`` into ``cache`` once (and ``MbBoot.java`` into its ``boot``
    subfolder, away from the runner); return the runner's class folder."""
    out = cache / "mb-runner"
    with _RUNNER_LOCK:
        if not (out / "boot" / "MbBoot.class").is_file():
            out.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                ["javac", "-proc:none", "-cp", JUNIT_CP, "-d", str(out), str(HERE / "MbInstrumentationRunner.java")],
                check=True,
                capture_output=True,
            )
            subprocess.run(
                ["javac", "-proc:none", "-d", str(out / "boot"), str(HERE / "MbBoot.java")],
                check=True,
                capture_output=True,
            )
    return out


class _Stream:
    """One adb stream: our id, the server's id, an inbox of received data, one write in flight."""

    def __init__(self, conn: _Connection, local: int, remote: int) -> None:
        self.conn, self.local, self.remote = conn, local, remote
        self.inbox: queue.Queue[bytes | None] = queue.Queue()
        self.acked = threading.Event()
        self.closed = threading.Event()

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        step = min(self.conn.max_payload, 4096)
        for start in range(0, len(view), step):
            if self.closed.is_set():
                raise ConnectionError("stream closed by the server")
            self.acked.clear()
            self.conn.send(p.pack(p.A_WRTE, self.local, self.remote, bytes(view[start : start + step])))
            while not self.acked.wait(0.2):
                if self.closed.is_set():
                    raise ConnectionError("stream closed by the server")

    def close(self) -> None:
        if not self.closed.is_set():
            self.closed.set()
            self.conn.send(p.pack(p.A_CLSE, self.local, self.remote))


class _Connection:
    """One TCP connection from the adb server."""

    def __init__(self, device: SimDevice, sock: socket.socket) -> None:
        self.device, self.sock = device, sock
        self.lock = threading.Lock()
        self.streams: dict[int, _Stream] = {}
        self.next_id = 1
        self.max_payload = 4096

    def send(self, data: bytes) -> None:
        with self.lock:
            self.sock.sendall(data)

    def serve(self) -> None:
        try:
            while True:
                command, arg0, arg1, data = p.read_message(self.sock)
                self.dispatch(command, arg0, arg1, data)
        except (ConnectionError, OSError):
            pass
        finally:
            for stream in list(self.streams.values()):
                stream.closed.set()
                stream.inbox.put(None)
            self.sock.close()

    def dispatch(self, command: int, arg0: int, arg1: int, data: bytes) -> None:
        if command == p.A_CNXN:
            if self.device.script.offline:
                return
            self.max_payload = max(1024, min(arg1, p.MAX_PAYLOAD))
            self.send(p.pack(p.A_CNXN, p.A_VERSION, p.MAX_PAYLOAD, self.device.banner()))
        elif command == p.A_OPEN:
            local, self.next_id = self.next_id, self.next_id + 1
            stream = _Stream(self, local, arg0)
            self.streams[local] = stream
            self.send(p.pack(p.A_OKAY, local, arg0))
            service = data.rstrip(b"\0").decode("utf-8", "replace")
            threading.Thread(target=self.device.service, args=(stream, service), daemon=True).start()
        elif command == p.A_OKAY and arg1 in self.streams:
            self.streams[arg1].acked.set()
        elif command == p.A_WRTE and arg1 in self.streams:
            self.streams[arg1].inbox.put(data)
            self.send(p.pack(p.A_OKAY, arg1, arg0))
        elif command == p.A_CLSE and arg1 in self.streams:
            stream = self.streams.pop(arg1)
            stream.closed.set()
            stream.inbox.put(None)


class _Reader:
    """Reads exact byte counts from a stream's inbox (sync requests arrive split across WRTEs)."""

    def __init__(self, stream: _Stream) -> None:
        self.stream, self.buf = stream, b""

    def read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.stream.inbox.get(timeout=60)
            if chunk is None:
                raise ConnectionError("stream closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out


class SimDevice:
    """A simulated device listening on ``127.0.0.1:port``; ``serial`` is ``"127.0.0.1:port"``."""

    def __init__(self, workdir: Path, script: Script | None = None, *, name: str = "sim", port: int = 0) -> None:
        self.script = script or Script()
        self.workdir = workdir
        self.name = name
        workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = workdir / "device.log"
        self.files: dict[str, bytes] = {}
        self.packages: dict[str, Path] = {}
        self.logcat: list[str] = []
        self.running: dict[str, subprocess.Popen[bytes]] = {}
        self.stopped: dict[str, threading.Event] = {}
        self.scripted_calls = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", port))
        self.port = self._server.getsockname()[1]
        self.serial = f"127.0.0.1:{self.port}"
        self._runner = compile_runner(workdir.parent / ".runner-cache")
        self.state = DeviceState(workdir, f"{workdir.resolve()}:{self.port}")
        threading.Thread(target=self._accept, daemon=True).start()

    # ------------------------------------------------------------------ transport

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=_Connection(self, sock).serve, daemon=True).start()

    def close(self) -> None:
        """Stop listening and kill every process the device started."""
        self._server.close()
        for proc in list(self.running.values()):
            proc.kill()
        self.state.kill_all()

    def banner(self) -> bytes:
        """The CNXN payload: system type, product properties and features."""
        return (
            f"device::ro.product.name=mbsim;ro.product.model={self.name};ro.product.device=mbsim;"
            "features=shell_v2,cmd,stat_v2\0"
        ).encode()

    def record(self, **event: object) -> None:
        """Append one event to the device-side log."""
        line = json.dumps({"t": time.time(), "device": self.serial, **event})
        with self._lock, self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def service(self, stream: _Stream, service: str) -> None:
        try:
            if service.startswith("sync:"):
                self._sync(stream)
            elif service.startswith(("shell", "exec:")):
                head, _, command = service.partition(":")
                self._shell(stream, command, v2=",v2" in head)
            else:
                stream.write(b"unsupported service\n")
        except (ConnectionError, OSError, queue.Empty):
            pass
        finally:
            stream.close()

    def _sync(self, stream: _Stream) -> None:
        reader = _Reader(stream)
        while True:
            tag = reader.read(4)
            (length,) = struct.unpack("<I", reader.read(4))
            if tag == b"QUIT":
                return
            arg = reader.read(length).decode("utf-8", "replace")
            if tag == b"STAT":
                data = self.files.get(arg)
                mode, size = (0o100644, len(data)) if data is not None else (0, 0)
                stream.write(b"STAT" + struct.pack("<III", mode, size, 0))
            elif tag == b"SEND":
                path = arg.rsplit(",", 1)[0]
                self.files[path] = self._receive(reader)
                self.record(cmd=f"sync SEND {path}", size=len(self.files[path]))
                stream.write(p.sync_reply(b"OKAY", arg=0))
            else:
                stream.write(p.sync_reply(b"FAIL", f"unsupported sync request {tag!r}".encode()))
                return

    @staticmethod
    def _receive(reader: _Reader) -> bytes:
        body = io.BytesIO()
        while True:
            tag = reader.read(4)
            (length,) = struct.unpack("<I", reader.read(4))
            if tag == b"DONE":
                return body.getvalue()
            if tag != b"DATA":
                raise ConnectionError(f"unexpected sync packet {tag!r}")
            body.write(reader.read(length))

    def _shell(self, stream: _Stream, command: str, *, v2: bool) -> None:
        def out(data: bytes, kind: int = p.SHELL_STDOUT) -> None:
            stream.write(p.shell_packet(kind, data) if v2 else data)

        self.record(cmd=command)
        code = self.run(command, out, stream)
        if v2:
            stream.write(p.shell_packet(p.SHELL_EXIT, bytes([code & 0xFF])))

    # ------------------------------------------------------------------ commands

    def run(self, command: str, out: Callable[..., None], stream: _Stream) -> int:
        """Run one shell command line; returns the exit status."""
        try:
            argv = shlex.split(command)
        except ValueError:
            out(b"sh: syntax error\n", p.SHELL_STDERR)
            return 2
        if not argv:
            return 0
        handler = getattr(self, "_cmd_" + argv[0].replace("-", "_"), None)
        if handler is None:
            out(f"/system/bin/sh: {argv[0]}: inaccessible or not found\n".encode(), p.SHELL_STDERR)
            return 127
        return int(handler(argv[1:], out, stream))

    def booted(self) -> bool:
        return time.monotonic() - self.started >= self.script.boot_delay_s

    def props(self) -> dict[str, str]:
        booted = self.booted()
        return {
            "ro.build.version.sdk": str(self.script.api_level),
            "ro.product.cpu.abi": self.script.abi,
            "ro.product.model": self.name,
            "sys.boot_completed": "1" if booted else "",
            "dev.bootcomplete": "1" if booted else "",
            "init.svc.bootanim": "stopped" if booted else "running",
        }

    def _cmd_getprop(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        props = self.props()
        if args:
            out((props.get(args[0], "") + "\n").encode())
        else:
            out("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())).encode())
        return 0

    def _cmd_ps(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        """``ps -A -o USER,PID,NAME``: the app processes (:mod:`.state`) under a header."""
        rows = "".join(f"{user} {pid} {name}\n" for user, pid, name in self.state.processes())
        out(("USER PID NAME\nroot 1 init\nshell 2 sh\n" + rows).encode())
        return 0

    def _cmd_kill(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        pids = [a for a in args if a.isdigit()]
        bad = [pid for pid in pids if not self.state.kill(int(pid))]
        for pid in bad:
            out(f"kill: {pid}: No such process\n".encode(), p.SHELL_STDERR)
        return 1 if bad or not pids else 0

    def _cmd_settings(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        """``settings list|get|put|delete NS [KEY [VALUE]]``."""
        if len(args) < 2 or args[1] not in ("global", "system", "secure"):
            return 1
        verb, ns, rest = args[0], args[1], args[2:]
        values = self.state.settings(ns)
        if verb == "list":
            out("".join(f"{k}={v}\n" for k, v in sorted(values.items())).encode())
        elif verb == "get" and rest:
            out((values.get(rest[0], "null") + "\n").encode())
        elif verb == "put" and len(rest) >= 2:
            self.state.write_settings(ns, {**values, rest[0]: rest[1]})
        elif verb == "delete" and rest:
            values.pop(rest[0], None)
            self.state.write_settings(ns, values)
        else:
            return 1
        return 0

    def _cmd_find(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        """``find /sdcard/ -type f -exec md5sum {} +`` (the one form the harness sends)."""
        if not args or self.state.device_path(args[0]) is None or "md5sum" not in args:
            out(b"find: unsupported here\n", p.SHELL_STDERR)
            return 1
        out(self.state.md5_lines().encode())
        return 0

    def _cmd_rm(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        for arg in (a for a in args if not a.startswith("-")):
            host = self.state.device_path(arg)
            if host is None or host == self.state.sdcard.resolve():
                out(f"rm: {arg}: Permission denied\n".encode(), p.SHELL_STDERR)
                return 1
            if host.is_file():
                host.unlink()
        return 0

    def _cmd_echo(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        out((" ".join(args) + "\n").encode())
        return 0

    def _cmd_input(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        return 0 if args else 1

    def _cmd_wm(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        if args[:1] == ["size"]:
            out(b"Physical size: 1080x2400\n")
        return 0

    def _cmd_log(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        tag = args[args.index("-t") + 1] if "-t" in args else "log"
        message = " ".join(a for i, a in enumerate(args) if a != "-t" and (i == 0 or args[i - 1] != "-t"))
        self.logcat.append(f"I {tag}: {message}")
        self.record(mark=message, tag=tag)
        return 0

    def _cmd_logcat(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        if "-c" in args:
            self.logcat.clear()
            return 0
        out(("".join(line + "\n" for line in self.logcat)).encode())
        return 0

    def _scripted(self) -> bool:
        limit = self.script.scripted_times
        self.scripted_calls += 1
        return limit is None or self.scripted_calls <= limit

    def _cmd_pm(self, args: list[str], out: Callable[..., None], _s: _Stream) -> int:
        if not args:
            return 1
        verb, rest = args[0], args[1:]
        if verb == "install":
            return self._install(rest, out)
        if verb == "uninstall":
            if self.packages.pop(rest[-1], None) is None:
                out(b"Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
                return 1
            out(b"Success\n")
            return 0
        if verb == "clear":
            out(b"Success\n" if rest[-1] in self.packages else b"Failed\n")
            return 0 if rest[-1] in self.packages else 1
        if verb == "list":
            uid = "-U" in rest
            out(
                "".join(
                    f"package:{k}" + (f" uid:{self.state.uid(k)}" if uid else "") + "\n" for k in sorted(self.packages)
                ).encode()
            )
            return 0
        return 1

    def _install(self, args: list[str], out: Callable[..., None]) -> int:
        if self.script.install_failure and self._scripted():
            out(f"Failure [{self.script.install_failure}: scripted]\n".encode())
            return 1
        if self.script.storage_quota is not None and self.state.used() > self.script.storage_quota:
            out(b"Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE: shared storage full]\n")
            return 1
        if self.state.settings("global").get("verifier_verify_adb_installs") == "1":
            out(b"Failure [INSTALL_FAILED_VERIFICATION_FAILURE: the package verifier rejected an adb install]\n")
            return 1
        data = self.files.get(args[-1])
        if data is None:
            out(f"Failure [INSTALL_FAILED_INVALID_URI: {args[-1]} not found]\n".encode())
            return 1
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as jar:
                manifest = jar.read("META-INF/MANIFEST.MF").decode()
        except (zipfile.BadZipFile, KeyError):
            out(b"Failure [INSTALL_PARSE_FAILED_NOT_APK: not an archive with a manifest]\n")
            return 1
        attrs = dict(line.split(": ", 1) for line in manifest.splitlines() if ": " in line)
        package = attrs.get("Mobilebench-Package")
        if not package:
            out(b"Failure [INSTALL_PARSE_FAILED_MANIFEST_MALFORMED: no package]\n")
            return 1
        dest = self.workdir / "packages" / f"{package}.jar"
        dest.parent.mkdir(exist_ok=True)
        dest.write_bytes(data)
        self.packages[package] = dest
        self.state.uid(package)
        out(b"Success\n")
        return 0

    def _cmd_am(self, args: list[str], out: Callable[..., None], stream: _Stream) -> int:
        if args[:1] == ["force-stop"]:
            pkg = args[-1]
            self.stopped.setdefault(pkg, threading.Event()).set()
            proc = self.running.pop(pkg, None)
            if proc is not None:
                proc.kill()
            return 0
        if args[:1] == ["instrument"]:
            return self._instrument(args[1:], out, stream)
        return 1

    def _instrument(self, args: list[str], out: Callable[..., None], stream: _Stream) -> int:
        target = args[args.index("class") + 1] if "class" in args else ""
        component = args[-1]
        test_pkg = component.split("/", 1)[0]
        jar = self.packages.get(test_pkg)
        if jar is None:
            out(
                f"INSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: ComponentInfo{{{component}}}\n"
                "INSTRUMENTATION_STATUS: id=ActivityManagerService\nINSTRUMENTATION_STATUS_CODE: -1\n"
                f"android.util.AndroidException: INSTRUMENTATION_FAILED: {component}\n".encode()
            )
            return 1
        behaviour = self.script.instrument if self.script.instrument != "real" and self._scripted() else "real"
        self.record(instrument=target, behaviour=behaviour)
        if behaviour == "real":
            return self._run_real(jar, target, test_pkg, out)
        return self._canned(behaviour, target, test_pkg, out, stream)

    def _run_real(self, test_jar: Path, target: str, test_pkg: str, out: Callable[..., None]) -> int:
        with zipfile.ZipFile(test_jar) as jar:
            manifest = jar.read("META-INF/MANIFEST.MF").decode()
        attrs = dict(line.split(": ", 1) for line in manifest.splitlines() if ": " in line)
        app = self.packages.get(attrs.get("Mobilebench-Target-Package", "").strip())
        tested = ":".join(str(x) for x in (app, test_jar) if x)
        app_pkg = attrs.get("Mobilebench-Target-Package", "").strip() or test_pkg
        java = [
            "java",
            "-Xshare:auto",
            f"-Xmx{HEAP_LIMIT}",
            "-XX:+DisableAttachMechanism",
            f"-Dmb.sim.sdcard={self.state.sdcard}",
            f"-Dmb.sim.settings={self.state.settings_dir}",
        ]
        if self.script.status_channel == "socket":
            finished = run_instrumented(
                [*java, "-cp", str(self._runner / "boot"), "MbBoot", str(self._runner), JUNIT_CP, tested, target],
                self.state.env(app_pkg),
                logcat=self.logcat,
                out=out,
                started=lambda proc: self.running.__setitem__(test_pkg, proc),
            )
            proc = self.running.get(test_pkg)
        else:
            proc = subprocess.Popen(
                [*java, "-cp", f"{tested}:{JUNIT_CP}:{self._runner}", "MbInstrumentationRunner", target],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=self.state.env(app_pkg),
            )
            self.running[test_pkg] = proc
            assert proc.stdout is not None
            finished = False
            for line in proc.stdout:
                finished = finished or line.startswith(b"INSTRUMENTATION_CODE:")
                out(line)
            proc.wait()
        if self.running.pop(test_pkg, None) is not None and not finished:
            self.logcat.append(f"E AndroidRuntime: Process: {test_pkg}, exit {proc.returncode}")
            out(b"INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n")
        return 0

    def _canned(self, behaviour: str, target: str, test_pkg: str, out: Callable[..., None], stream: _Stream) -> int:
        """Scripted outputs in the runner's shape, for every selected method: the first one gets the
        behaviour, the others (the harness's canaries) their known answer (``canary_fail_*`` fails)."""
        selected = [t for t in target.split(",") if t]
        if behaviour == "hang":
            stopped = self.stopped.setdefault(test_pkg, threading.Event())
            stopped.clear()
            while not stopped.wait(0.2) and not stream.closed.is_set():
                pass
            return 0
        if behaviour == "zero":
            out(b"INSTRUMENTATION_RESULT: stream=\n\nTime: 0.001\n\nOK (0 tests)\n\nINSTRUMENTATION_CODE: -1\n")
            return 0
        text, failures = "", 0
        for index, test in enumerate(selected, start=1):
            cls, _, method = test.partition("#")
            head = (
                f"INSTRUMENTATION_STATUS: class={cls}\nINSTRUMENTATION_STATUS: current={index}\n"
                f"INSTRUMENTATION_STATUS: id=AndroidJUnitRunner\nINSTRUMENTATION_STATUS: numtests={len(selected)}\n"
            )
            text += (
                f"{head}INSTRUMENTATION_STATUS: stream=\nINSTRUMENTATION_STATUS: test={method}\n"
                "INSTRUMENTATION_STATUS_CODE: 1\n"
            )
            if behaviour == "crash":
                self.logcat += [
                    "E AndroidRuntime: FATAL EXCEPTION: main",
                    f"E AndroidRuntime: Process: {test_pkg}, PID: 4242",
                    "E AndroidRuntime: java.lang.NullPointerException: scripted crash",
                ]
                out((text + "INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n").encode())
                return 0
            nonce = method.rsplit("_", 1)[-1]
            message = (
                f"mobilebench canary {nonce}"
                if method.startswith("canary_fail_")
                else "scripted"
                if index == 1 and behaviour == "assertion"
                else None
            )
            if message:
                failures += 1
                text += (
                    f"{head}INSTRUMENTATION_STATUS: stack=java.lang.AssertionError: {message}\n"
                    "\tat org.junit.Assert.fail(Assert.java:89)\n"
                    f"INSTRUMENTATION_STATUS: stream=\nINSTRUMENTATION_STATUS: test={method}\n"
                    "INSTRUMENTATION_STATUS_CODE: -2\n"
                )
            else:
                text += (
                    f"{head}INSTRUMENTATION_STATUS: stream=.\nINSTRUMENTATION_STATUS: test={method}\n"
                    "INSTRUMENTATION_STATUS_CODE: 0\n"
                )
        summary = (
            f"FAILURES!!!\nTests run: {len(selected)},  Failures: {failures}"
            if failures
            else f"OK ({len(selected)} tests)"
        )
        out(
            (
                text + f"INSTRUMENTATION_RESULT: stream=\n\nTime: 0.01\n\n{summary}\n\nINSTRUMENTATION_CODE: -1\n"
            ).encode()
        )
        return 0
