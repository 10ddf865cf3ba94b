"""A demo daemon and a headless chromium at a phone's size, for the web app's browser tests
(test_web_app.py) and its benchmark (Benchmarks/web-bench).

A daemon in a private directory, its Unix socket for what the person at the daemon would do
(make a code, read what the camera did), and Debian's chromium driven through Selenium and
Debian's chromedriver.
"""
import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("UNLEASHED_BINARY", os.path.join(ROOT, ".build", "debug", "unleashed"))
SIMULATOR = os.path.join(os.path.dirname(BINARY), "unleashed-sim")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
# The phone's size, upright; UNLEASHED_WEB_ORIENTATION=landscape holds it sideways, as make
# check-long runs the tests of the views and the field again.
PHONE = (740, 360) if os.environ.get("UNLEASHED_WEB_ORIENTATION") == "landscape" else (360, 740)
TABLET = (800, 1280)


def wait_until(condition, timeout=30, every=0.05):
    """Whether `condition()` comes to hold within `timeout` seconds, asked every `every`: for
    state in another process (the daemon's answers, its log, a port), which sends no notice of a
    change. The limit only guards against a hang; the caller fails naming what never happened."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return condition()


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over the daemon's Unix socket, as `curl --unix-socket` speaks it."""

    def __init__(self, path, timeout=30):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


class TetheredCamera:
    """`unleashed-sim ptpip`: a camera libgphoto2 reaches over PTP/IP on a loopback port."""

    def __init__(self):
        self.card = tempfile.mkdtemp(prefix="unleashed-web-card-")
        self.process = subprocess.Popen([SIMULATOR, "ptpip", "--port", "0", "--card", self.card],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        first = json.loads(self.process.stdout.readline())
        self.port = f"ptpip:{first['listening']}"

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        self.process.stdout.close()
        shutil.rmtree(self.card, ignore_errors=True)


class Daemon:
    """`unleashed [--demo] daemon --web 127.0.0.1:0` in a private directory: the demo camera, or
    with `tethered` a camera on PTP/IP through libgphoto2, its pictures saved in `pictures`."""

    def __init__(self, locked=False, port=0, binary=BINARY, tethered=None, extra="", environment=None):
        self.port = port
        self.environment = environment or {}
        self.binary = binary
        self.tethered = tethered
        self.work = tempfile.mkdtemp(prefix="unleashed-web-test-")
        for folder in ("run", "state", "config"):
            os.makedirs(os.path.join(self.work, folder), mode=0o700)
        self.socket = os.path.join(self.work, "run", "control.sock")
        self.log_path = os.path.join(self.work, "daemon.log")
        self.pictures = os.path.join(self.work, "pictures")
        with open(os.path.join(self.work, "unleashed.toml"), "w") as config:
            if tethered:
                config.write(f'backend = "gphoto2"\nport = "{tethered.port}"\n\n[downloads]\nfolder = "{self.pictures}"\n\n')
            config.write(f'[daemon]\nsocket = "{self.socket}"\nlocked = {"true" if locked else "false"}\n')
            config.write(extra)
        self.config = os.path.join(self.work, "unleashed.toml")
        self.log = open(self.log_path, "w")
        self.start()

    def start(self):
        """Starts the daemon, again after ``halt()``: same files, same port, same paired browsers."""
        environment = dict(os.environ, XDG_RUNTIME_DIR=os.path.join(self.work, "run"),
                           XDG_STATE_HOME=os.path.join(self.work, "state"), XDG_CONFIG_HOME=os.path.join(self.work, "config"),
                           UNLEASHED_DEMO_STATE=os.path.join(self.work, "demo-camera.json"), **self.environment)
        self.log.truncate(0)
        self.log.seek(0)
        self.process = subprocess.Popen(
            [self.binary, *([] if self.tethered else ["--demo"]), "daemon", "--config", os.path.join(self.work, "unleashed.toml"), "--web", f"127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT, env=environment)
        self.url = self._wait_for(r"web app listening on (https?://127\.0\.0\.1:\d+)")
        def ready():
            try:
                return any(camera["status"] and camera["status"]["connection"] == "ready" for camera in self.get("/v1/status")["cameras"])
            except (OSError, KeyError, TypeError):
                return False
        if not wait_until(ready, every=0.1):
            raise AssertionError(f"the camera never became ready:\n{self.text()}")

    def text(self):
        with open(self.log_path) as log:
            return log.read()

    def _wait_for(self, pattern, timeout=30):
        wait_until(lambda: re.search(pattern, self.text()) or self.process.poll() is not None, timeout)
        match = re.search(pattern, self.text())
        if match:
            return match.group(1)
        if self.process.poll() is not None:
            raise AssertionError(f"the daemon exited ({self.process.returncode}):\n{self.text()}")
        raise AssertionError(f"the daemon never logged {pattern!r}:\n{self.text()}")

    def logged_code(self):
        """The newest pairing code the daemon printed, as the person at the daemon reads it."""
        codes = re.findall(r"pairing code (\d{3}) (\d{3}) \((\w+) role\)", self.text())
        assert codes, self.text()
        return codes[-1][0] + codes[-1][1]

    def request(self, method, path, body=None):
        connection = UnixHTTPConnection(self.socket)
        headers = {"Content-Type": "application/json"} if body is not None else {}
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, (json.loads(data) if data else None)

    def get(self, path):
        status, document = self.request("GET", path)
        assert status == 200, (path, status, document)
        return document

    def code(self, role="operator"):
        status, document = self.request("POST", "/v1/web/codes", {"role": role})
        assert status == 201, document
        return document["code"]

    def camera(self):
        return self.get("/v1/status")["cameras"][0]["status"]

    def setting(self, name):
        return self.get(f"/v1/cameras/demo/settings/{name}")["value"]

    def job(self, job_id):
        return self.get(f"/v1/jobs/{job_id}")

    def cli(self, *arguments, timeout=60):
        """`unleashed ARGUMENTS` against this daemon, as its user runs it beside it."""
        done = subprocess.run([self.binary, *arguments], capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, UNLEASHED_SOCKET=self.socket))
        return done

    def halt(self):
        """Stops the daemon as systemd would (SIGTERM), keeping its files for ``start()``."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def stop(self):
        self.halt()
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)


class Broker:
    """Debian's mosquitto on a free loopback port, anonymous, for daemons with [mqtt]. It runs as
    root when the tests do: dropping to its own user would clear the parent-death signal."""

    def __init__(self):
        self.port = free_port()
        self.work = tempfile.mkdtemp(prefix="unleashed-web-broker-")
        config = os.path.join(self.work, "mosquitto.conf")
        with open(config, "w") as file:
            file.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
            if os.geteuid() == 0:
                file.write("user root\n")
        self.log = open(os.path.join(self.work, "mosquitto.log"), "w")
        self.process = subprocess.Popen(["mosquitto", "-c", config], stdout=self.log, stderr=subprocess.STDOUT)
        def listening():
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", self.port)) == 0
        # mosquitto logs nowhere that it listens: its port is tried.
        wait_until(lambda: listening() or self.process.poll() is not None, timeout=10)
        if listening():
            return
        self.stop()
        raise AssertionError("mosquitto did not start")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)


class Certificate:
    """A self-signed certificate the test makes for `name` (and 127.0.0.1), with what chromium
    needs to trust it and no other: the SHA-256 of its public key, for
    --ignore-certificate-errors-spki-list."""

    def __init__(self, name="unleashed.test"):
        self.name = name
        self.work = tempfile.mkdtemp(prefix="unleashed-web-cert-")
        self.certificate = os.path.join(self.work, "web.pem")
        self.key = os.path.join(self.work, "web-key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                        "-days", "2", "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name},IP:127.0.0.1",
                        "-keyout", self.key, "-out", self.certificate], check=True, capture_output=True)
        public = subprocess.run(["openssl", "x509", "-in", self.certificate, "-pubkey", "-noout"], check=True, capture_output=True).stdout
        der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=public, check=True, capture_output=True).stdout
        self.spki = base64.b64encode(hashlib.sha256(der).digest()).decode()

    def config(self):
        """The daemon's [web] table that serves HTTPS with it, under its name."""
        return f'\n[web]\ncertificate = "{self.certificate}"\nkey = "{self.key}"\nhosts = ["{self.name}"]\n'

    def browser_arguments(self, port):
        """Chromium's flags: the name resolves to this machine, and this certificate alone is trusted."""
        return (f"--host-resolver-rules=MAP {self.name} 127.0.0.1", f"--ignore-certificate-errors-spki-list={self.spki}")

    def remove(self):
        shutil.rmtree(self.work, ignore_errors=True)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Browser:
    """Headless chromium at a phone's size, with waits that report what the page showed."""

    def __init__(self, size=PHONE, arguments=(), command_prefix=()):
        """`arguments` go to chromium; `command_prefix` runs it under another program (`nice`)."""
        self.profile = tempfile.mkdtemp(prefix="unleashed-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--no-first-run", "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={self.profile}",
                         *arguments):
            options.add_argument(argument)
        if command_prefix:
            # chromedriver starts the binary it is given: a wrapper script that execs chromium under the prefix.
            wrapper = os.path.join(self.profile, "chromium")
            with open(wrapper, "w") as file:
                file.write("#!/bin/sh\nexec " + " ".join(command_prefix) + f' {CHROMIUM} "$@"\n')
            os.chmod(wrapper, 0o755)
            options.binary_location = wrapper
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.resize(size)

    def resize(self, size, scale=2):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": scale, "mobile": size[0] < 600})
        self.driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": size[0] < 600})

    def open(self, url):
        self.driver.get(url)

    def find(self, selector):
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def all(self, selector):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def click(self, selector):
        element = self.find(selector)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def text(self, selector):
        return self.find(selector).text

    def wait(self, condition, what, timeout=20):
        """Waits until `condition(self)` is truthy; the failure says what the page showed."""
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda _: condition(self))
        except TimeoutException:
            body = self.driver.execute_script("return document.body.innerText")
            raise AssertionError(f"waited {timeout} s for {what}; the page showed:\n{body}\nconsole: {self.console()}")

    def wait_text(self, selector, predicate, what, timeout=20):
        return self.wait(lambda browser: predicate(browser.text(selector)) and browser.text(selector), what, timeout)

    def view(self, name):
        """Switches mode through the tab bar, or the side menu for the views it alone holds."""
        tab = self.all(f".tabbar [data-view='{name}']")
        if tab:
            tab[0].click()
        else:
            self.click("#menu-button")
            self.wait(lambda b: b.find("#menu").is_displayed(), "the menu to open")
            self.click(f"#menu [data-view='{name}']")
        self.wait(lambda b: b.find(f"#view-{name}").is_displayed(), f"the {name} view")

    def pair(self, url, code):
        self.open(url)
        self.wait(lambda b: b.find("#pairing").is_displayed(), "the pairing view")
        self.find("#pair-code").send_keys(code)
        self.click("#pair-submit")
        self.wait(lambda b: b.find("#app").is_displayed(), "the app after pairing")
        # A first visit opens with its steps; the tests of the modes skip them (test_views tests them).
        if self.find("#onboarding").is_displayed():
            self.click("#onboarding-skip")
            self.wait(lambda b: not b.find("#onboarding").is_displayed(), "the first visit's steps skipped")
        self.wait_text("#connection-text", lambda t: t.lower() in ("ready", "busy"), "the camera to be shown ready")

    def console(self):
        try:
            return [entry["message"] for entry in self.driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
        except Exception:  # a driver that is gone has no log
            return []

    def screenshot(self, name):
        folder = os.environ.get("UNLEASHED_SCREENSHOTS") or os.path.join(tempfile.gettempdir(), "unleashed-screenshots")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{name}.png")
        self.driver.save_screenshot(path)
        return path

    def quit(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)
