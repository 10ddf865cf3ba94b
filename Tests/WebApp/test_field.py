"""What a night in the field needs of the phone: the screen kept on while something runs (HTTPS,
with a certificate the test makes), the page's shell kept by its service worker for when the
daemon is out of reach, a notification when a run ends out of sight, and the phone's position
as the cameras' geotag. Each over HTTPS where the browser asks for it, and over plain HTTP the
page says why it cannot."""
import json
import re
import struct
import time
import urllib.request

import pytest

from harness import PHONE, Browser, Certificate, Daemon, free_port, wait_until


@pytest.fixture(scope="module")
def secure():
    """A demo daemon over HTTPS at https://unleashed.test:PORT, and a phone that trusts its certificate."""
    certificate = Certificate()
    daemon = Daemon(port=free_port(), extra=certificate.config())
    port = int(daemon.url.rsplit(":", 1)[1])
    browser = Browser(PHONE, arguments=certificate.browser_arguments(port))
    url = f"https://{certificate.name}:{port}/"
    browser.pair(url, daemon.code("operator"))
    yield daemon, browser, url
    browser.quit()
    daemon.stop()
    certificate.remove()


def field(browser):
    return browser.driver.execute_script("return window.unleashedState.field")


def start_job(daemon, interval_ms, frames=None):
    body = {"camera": "demo", "plan": {"intervalMs": interval_ms, **({"frames": frames} if frames else {"forever": True})}}
    status, job = daemon.request("POST", "/v1/jobs", body)
    assert status == 201, job
    return job["id"]


def grant(browser, url, *permissions):
    origin = url.rstrip("/")
    browser.driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": origin, "permissions": list(permissions)})


def test_the_screen_stays_on_over_https_while_a_run_goes(secure):
    daemon, browser, url = secure
    assert browser.driver.execute_script("return isSecureContext && location.protocol") == "https:"
    grant(browser, url, "wakeLockScreen")
    browser.view("timelapse")
    job = start_job(daemon, 1000)
    browser.wait(lambda b: field(b)["wake"] == "held", "the screen's wake lock taken")
    browser.wait_text("#view-timelapse .wake-note", lambda t: "stays on" in t, "the page saying the screen stays on")
    daemon.request("POST", f"/v1/jobs/{job}/stop", {"when": "now"})
    browser.wait(lambda b: field(b)["wake"] == "idle", "the wake lock let go when the run ended")


def test_over_plain_http_the_page_says_why_the_screen_may_sleep():
    # A name, not this machine's address: over plain HTTP it is not a secure context.
    daemon = Daemon(port=free_port(), extra='\n[web]\nhosts = ["phone.test"]\n')
    try:
        port = int(daemon.url.rsplit(":", 1)[1])
        browser = Browser(PHONE, arguments=(f"--host-resolver-rules=MAP phone.test 127.0.0.1",))
        try:
            browser.pair(f"http://phone.test:{port}/", daemon.code("operator"))
            assert browser.driver.execute_script("return isSecureContext") is False
            browser.view("timelapse")
            job = start_job(daemon, 1000)
            note = browser.wait_text("#view-timelapse .wake-note", lambda t: "HTTPS" in t, "why the screen may sleep")
            assert "screen may sleep" in note
            browser.view("app")
            assert "HTTPS" in browser.text("#notify-state")
            browser.click("#geotag-toggle")
            browser.wait_text("#geotag-state", lambda t: "HTTPS" in t, "why the position cannot be given")
            daemon.request("POST", f"/v1/jobs/{job}/stop", {"when": "now"})
        finally:
            browser.quit()
    finally:
        daemon.stop()


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_the_shell_opens_from_the_service_worker_with_the_daemon_stopped(fresh_browser):
    restarting = Daemon(port=free_port())
    try:
        manifest = json_get(restarting.url + "/manifest.webmanifest")
        sizes = {icon["sizes"]: icon for icon in manifest["icons"]}
        for size in ("192x192", "512x512"):
            with urllib.request.urlopen(restarting.url + "/" + sizes[size]["src"]) as response:
                assert png_size(response.read()) == tuple(map(int, size.split("x")))
        browser = fresh_browser()
        browser.pair(restarting.url + "/", restarting.logged_code())
        browser.wait(lambda b: b.driver.execute_script("return !!navigator.serviceWorker.controller"), "the service worker in control")
        restarting.halt()
        browser.driver.refresh()
        browser.wait_text("#startup-message", lambda t: "out of reach" in t, "the page from the service worker, saying the daemon is out of reach")
        assert browser.text("#pairing-title") == "Reaching the daemon"
        restarting.start()
        browser.wait(lambda b: b.find("#app").is_displayed(), "the app once the daemon answers again", timeout=40)
        browser.wait_text("#connection-text", lambda t: t == "Ready", "the camera ready")
    finally:
        restarting.stop()


def json_get(url):
    with urllib.request.urlopen(url) as response:
        return json.loads(response.read())


def test_a_run_that_ends_out_of_sight_is_notified_and_told_in_the_page(secure):
    daemon, browser, url = secure
    grant(browser, url, "notifications")
    browser.driver.refresh()
    browser.wait(lambda b: b.find("#app").is_displayed(), "the app")
    browser.wait(lambda b: b.driver.execute_script("return !!navigator.serviceWorker.controller"), "the service worker in control")
    assert field(browser)["notify"] == "granted"
    job = start_job(daemon, 300, frames=6)
    page = browser.driver.current_window_handle
    browser.driver.switch_to.new_window("tab")
    try:
        assert wait_until(lambda: not daemon.job(job)["live"]), "the run never ended"
        browser.driver.switch_to.window(page)
        browser.wait_text("#notice", lambda t: f"Time-lapse {job}" in t and "6 taken" in t, "the end told in the page")
        titles = browser.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            navigator.serviceWorker.ready.then(r => r.getNotifications()).then(list => done(list.map(n => [n.title, n.tag])));
        """)
        assert [f"job-{job}" in tag for _, tag in titles].count(True) == 1, titles
    finally:
        for handle in browser.driver.window_handles:
            if handle != page:
                browser.driver.switch_to.window(handle)
                browser.driver.close()
        browser.driver.switch_to.window(page)
    browser.click("#notice button")
    browser.wait(lambda b: not b.find("#notice").is_displayed(), "the notice dismissed")


def test_the_phones_position_is_the_cameras_geotag(secure):
    daemon, browser, url = secure
    grant(browser, url, "geolocation")
    browser.driver.execute_cdp_cmd("Emulation.setGeolocationOverride", {"latitude": 46.5197, "longitude": 6.6323, "accuracy": 10})
    browser.view("app")
    browser.click("#geotag-toggle")
    text = browser.wait_text("#geotag-state", lambda t: "geotagged" in t, "the position given to the camera")
    assert re.search(r"46\.5197\d*, 6\.6323", text), text
    browser.click("#geotag-toggle")
    browser.wait_text("#geotag-state", lambda t: "no position" in t, "geotagging off")


def test_the_phones_clock_corrects_an_unsynchronised_daemon_and_start_at_fires_on_it(fresh_browser, tmp_path):
    # The host's clock, as the daemon reads it, is two hours behind and not synchronised (a Pi
    # with no clock battery, off the network): the test plays it through the daemon's test seam.
    host_clock = tmp_path / "host-clock.json"
    host_clock.write_text('{"synchronised": false, "wallClockErrorMs": -7200000}')
    daemon = Daemon(environment={"UNLEASHED_TEST_HOST_CLOCK": str(host_clock)})
    try:
        assert daemon.get("/v1/clock")["correction"] is None
        browser = fresh_browser()
        browser.pair(daemon.url + "/", daemon.code("operator"))
        assert wait_until(lambda: daemon.get("/v1/clock")["correction"] is not None), "the page never offered its clock"
        correction = daemon.get("/v1/clock")["correction"]
        assert abs(correction["offsetMs"] - 7200000) < 5000, correction
        session = browser.driver.execute_script("return window.unleashedState.session.client")
        assert correction["webClient"] == session
        browser.wait_text("#notice", lambda t: "keeps this phone's time" in t, "the correction told in the page")
        browser.click("#notice button")
        browser.view("app")
        assert "this phone" in browser.text("#clock-state") and "2" in browser.text("#clock-state")
        # A run to start at a time of day eight seconds from now on the phone's clock (the true
        # one): on the host's it would be two hours and eight seconds away.
        due = time.time() + 8
        start_at = time.strftime("%H:%M:%S", time.localtime(due))
        submitted = daemon.cli("--json", "timelapse", "--interval", "1s", "--frames", "1", "--start-at", start_at, "--detach")
        assert submitted.returncode == 0, submitted.stderr
        job = next(json.loads(line)["job"]["id"] for line in submitted.stdout.splitlines() if '"job"' in line)
        assert wait_until(lambda: daemon.job(job)["summary"]["taken"] == 1, timeout=30), f"the run never fired: {daemon.job(job)}"
        fired = time.time()
        assert due - 1.5 <= fired <= due + 5, f"slot 1 fired {fired - due:+.1f} s from {start_at} on the phone's clock"
    finally:
        daemon.stop()
