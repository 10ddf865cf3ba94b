"""The web app as a photographer meets it on a phone, in a real browser, against a demo daemon:
pair, shoot, run a time-lapse and watch it, stop it, change settings, the viewer role, the
locked mode, a reload in the middle of a run, and the page at phone and tablet sizes.

Each test reads what the camera did from the daemon's socket, never from the page alone, so a
page that shows a shot the camera did not take fails.
"""
import json
import os
import re
import subprocess
import time
from datetime import datetime

import pytest

from harness import BINARY, PHONE, TABLET, Broker, Daemon, TetheredCamera, UnixHTTPConnection, free_port, wait_until


def frame_number(text):
    match = re.match(r"(\d+) of", text)
    return int(match.group(1)) if match else 0


def start_timelapse(phone, interval, frames=None, forever=False):
    phone.view("timelapse")
    if phone.find("#run-ended").is_displayed():
        phone.click("#run-new")
    phone.wait(lambda b: b.find("#plan-form").is_displayed(), "the plan form (no run on the camera)")
    interval_input = phone.find("#plan-interval")
    interval_input.clear()
    interval_input.send_keys(interval)
    if forever:
        phone.click("#stop-kind [data-value='forever']")
    else:
        phone.click("#stop-kind [data-value='frames']")
        count = phone.find("#plan-frames")
        count.clear()
        count.send_keys(str(frames))
    phone.click("#plan-start")
    phone.wait(lambda b: b.find("#run-panel").is_displayed(), "the run panel after Start")
    summary = phone.text("#run-summary")
    return int(re.match(r"Job (\d+)", summary).group(1))


def test_pairing_takes_the_code_the_daemon_printed(daemon, fresh_browser):
    browser = fresh_browser()
    browser.open(daemon.url + "/")
    browser.wait(lambda b: b.find("#pairing").is_displayed(), "the pairing view")
    # A wrong code is refused with the daemon's words, and how many tries are left.
    browser.find("#pair-code").send_keys("000000")
    browser.click("#pair-submit")
    error = browser.wait_text("#pair-error", lambda t: "tries left" in t, "the refusal of a wrong code")
    assert "not valid" in error
    # The QR code's address carries the code the daemon printed at start: opening it fills the field in.
    code = daemon.logged_code()
    browser.open(f"{daemon.url}/#code={code}")
    browser.wait(lambda b: b.find("#pair-code").get_attribute("value") == code, "the code read from the address")
    browser.click("#pair-submit")
    browser.wait(lambda b: b.find("#app").is_displayed(), "the app after pairing")
    assert "code=" not in browser.driver.current_url, "the used code stays out of the address bar and history"
    browser.wait_text("#connection-text", lambda t: t == "Ready", "the connection indicator")
    assert browser.find("#demo-badge").is_displayed()
    assert "simulated" in browser.find("#demo-badge").get_attribute("title")
    browser.wait_text("#camera-battery", lambda t: re.search(r"\d+ %", t), "the camera's battery")
    assert re.search(r"\d+ shots left", browser.text("#camera-shots-left"))
    assert browser.text("#camera-card") == "Card OK"
    # The session survives a reload: the cookie is the pairing.
    browser.driver.refresh()
    browser.wait(lambda b: b.find("#app").is_displayed(), "the app after a reload, without pairing again")


def test_a_code_from_unleashed_web_code_pairs(daemon, phone):
    assert phone.find("#app").is_displayed()
    assert not phone.find("#access-banner").is_displayed(), "an operator of an unlocked daemon is not told of limits"


def test_shoot_and_see_the_shot(daemon, phone):
    phone.view("photo")
    before = daemon.camera()["shotCounter"]
    phone.click("#trigger")
    phone.wait_text("#shot-counter", lambda t: t == f"#{before + 1}", "the shot on the page")
    assert daemon.camera()["shotCounter"] == before + 1
    assert "ms from the press" in phone.text("#shot-detail")
    # The trigger works from the keyboard too.
    phone.driver.execute_script("document.getElementById('trigger').focus()")
    phone.driver.switch_to.active_element.send_keys("\n")
    phone.wait_text("#shot-counter", lambda t: t == f"#{before + 2}", "a shot from the keyboard")
    assert daemon.camera()["shotCounter"] == before + 2


def test_a_shot_from_elsewhere_shows_up_live(daemon, phone):
    phone.view("photo")
    status, shot = daemon.request("POST", "/v1/cameras/demo/shoot")
    assert status == 200
    phone.wait_text("#shot-counter", lambda t: t == f"#{shot['counter']}", "a shot another client took")


def test_bulb_focus_and_video_show_what_the_camera_answered(daemon, phone):
    phone.view("photo")
    # Out of bulb mode the camera refuses, and the page offers to set it.
    assert daemon.request("PUT", "/v1/cameras/demo/settings/shutter-speed", {"value": "1/125"})[0] == 200
    phone.click("#photo-bulb")
    seconds = phone.find("#bulb-seconds")
    seconds.clear()
    seconds.send_keys("0.3")
    phone.click("#trigger")
    phone.wait_text("#photo-message", lambda t: "bulb" in t.lower(), "the camera's refusal of a bulb out of bulb mode")
    phone.click("#photo-message button")
    phone.wait(lambda b: daemon.setting("shutter-speed") == "bulb", "the shutter speed set to bulb from the refusal")
    before = daemon.camera()["shotCounter"]
    phone.click("#trigger")
    # A short bulb ends by itself: the trigger comes back, and the camera took one picture.
    phone.wait(lambda b: daemon.camera()["shotCounter"] == before + 1, "the bulb exposure")
    phone.wait_text("#trigger-label", lambda t: t == "Bulb", "the trigger back from Close")
    jobs = daemon.get("/v1/jobs")["jobs"]
    assert jobs[0]["plan"]["exposure"] == {"kind": "bulb", "ms": 300} and jobs[0]["summary"]["taken"] == 1
    assert daemon.request("PUT", "/v1/cameras/demo/settings/shutter-speed", {"value": "1/125"})[0] == 200
    phone.click("#photo-single")
    # Focus says how it ended, and lets go.
    phone.click("#half-press")
    focus = phone.wait_text("#photo-message", lambda t: t.startswith("Focus:"), "the focus result")
    assert re.match(r"Focus: (acquired|failed|manualFocus)\.", focus), focus
    phone.click("#half-press")
    phone.wait_text("#half-press", lambda t: t == "Focus", "the half-press let go")
    # A recording shows its length when stopped.
    phone.view("video")
    phone.click("#record")
    phone.wait_text("#record-label", lambda t: t == "Stop", "recording")
    phone.click("#record")
    recorded = phone.wait_text("#video-message", lambda t: t.startswith("Recorded"), "the clip's length")
    assert re.match(r"Recorded \d", recorded), recorded


def test_a_timelapse_of_ten_frames_arrives_frame_by_frame(daemon, phone):
    job = start_timelapse(phone, "0.5s", frames=10)
    seen = []

    def follow():
        text = phone.text("#run-frame")
        number = frame_number(text)
        if number and (not seen or number != seen[-1]):
            seen.append(number)
            assert text.endswith("of 10"), text
        if phone.text("#run-state").startswith("finished"):
            # The last frame and the end may both have come since the frame was read.
            last = frame_number(phone.text("#run-frame"))
            if not seen or last != seen[-1]:
                seen.append(last)
            return True
        return False
    # The page is read as it changes, sampled: a frame shown for less than the sampling step may be missed.
    wait_until(follow)
    assert seen and seen[-1] == 10, f"frames seen on the page: {seen}"
    assert seen == sorted(seen)
    assert len(seen) >= 5, f"the page should follow the run frame by frame, saw {seen}"
    document = daemon.job(job)
    assert document["state"] == "finished"
    assert document["summary"]["taken"] == 10
    # The run stays on screen with its outcome; New time-lapse brings the plan back.
    assert "10 taken, 0 failed, 0 skipped" in phone.text("#run-summary")
    phone.click("#run-new")
    phone.wait(lambda b: b.find("#plan-form").is_displayed(), "the plan form after the run")
    phone.view("jobs")
    phone.wait(lambda b: any(f"Job {job}" in item.text and "10 taken" in item.text for item in b.all("#job-list li")),
               "the job in the history with its 10 frames")


def test_stop_a_running_timelapse(daemon, phone):
    job = start_timelapse(phone, "0.5s", forever=True)
    phone.wait_text("#run-frame", lambda t: frame_number(t) >= 2, "two frames of the endless run")
    assert phone.text("#run-frame").endswith("of ∞")
    phone.click("#run-stop")
    phone.click("#run-stop")  # Stop asks for a second tap
    state = phone.wait_text("#run-state", lambda t: t.startswith("finished"), "the run shown stopped")
    assert "stopped by browser" in state
    document = daemon.job(job)
    assert document["state"] == "finished"
    assert "stopped by browser" in document["reason"], document["reason"]


def clock_seconds(text):
    """The seconds a run clock shows ("1:05" or "1:02:03")."""
    seconds = 0
    for part in text.split(":"):
        seconds = seconds * 60 + int(part)
    return seconds


def test_the_countdown_is_the_daemons_next_slot(daemon, phone):
    # A pause moves the schedule: after it, slot 2 is due an interval after slot 1 plus the time
    # paused. The page counts down to the daemon's next slot, not to one it works out itself.
    job = start_timelapse(phone, "20s", frames=3)
    phone.wait_text("#run-frame", lambda t: frame_number(t) >= 1, "frame 1")
    status, answer = daemon.request("POST", f"/v1/jobs/{job}/pause")
    assert status == 200, answer
    assert answer["nextSlot"] is None
    phone.wait_text("#run-next", lambda t: t == "paused", "the run shown paused")
    paused_at = time.monotonic()
    wait_until(lambda: time.monotonic() - paused_at >= 4, timeout=10)
    status, answer = daemon.request("POST", f"/v1/jobs/{job}/continue")
    assert status == 200, answer
    assert wait_until(lambda: daemon.job(job)["nextSlot"] is not None), "the daemon never said the next slot"
    document = daemon.job(job)
    due = datetime.fromisoformat(document["nextSlot"]["at"]).timestamp()
    assert document["nextSlot"]["frame"] == 2
    assert due - datetime.fromisoformat(document["t0"]).timestamp() >= 24, "slot 2 moved by the 4 s paused"
    # The daemon and the browser share this machine's clock.
    shown = lambda: abs(clock_seconds(phone.text("#run-next")) - (due - time.time())) <= 1.5
    phone.wait(lambda b: shown(), f"the countdown to slot 2, due {document['nextSlot']['at']}, shows {phone.text('#run-next')}")
    status, _ = daemon.request("POST", f"/v1/jobs/{job}/stop")
    assert status == 200


def test_change_a_setting(daemon, phone):
    phone.view("settings")
    phone.wait(lambda b: b.all(".setting[data-setting='iso'] button[data-raw]"), "the ISO picker")
    target = "400" if daemon.setting("iso") != "400" else "800"
    option = next(o for o in phone.all(".setting[data-setting='iso'] button[data-raw]") if o.text == target)
    phone.driver.execute_script("arguments[0].scrollIntoView({inline: 'center', block: 'center'})", option)
    option.click()
    phone.wait(lambda b: daemon.setting("iso") == target, f"the camera's ISO to become {target}")
    phone.wait(lambda b: b.text(".setting[data-setting='iso'] .setting-head strong") == target, "the picker to show the new value")
    selected = phone.all(".setting[data-setting='iso'] [aria-pressed='true']")
    assert [element.text for element in selected] == [target]
    # A change made elsewhere moves the picker too.
    status, _ = daemon.request("PUT", "/v1/cameras/demo/settings/aperture", {"value": "f/11"})
    assert status == 200
    phone.wait(lambda b: b.text(".setting[data-setting='aperture'] .setting-head strong") == "f/11", "a change another client made")


def test_a_refused_value_shows_the_nearest_choices(daemon, phone):
    phone.view("settings")
    phone.wait(lambda b: b.all(".setting[data-setting='iso'] input"), "the ISO's other-value field")
    field = phone.find(".setting[data-setting='iso'] input")
    field.clear()
    field.send_keys("12345\n")
    message = phone.wait_text(".setting[data-setting='iso'] .message", lambda t: "nearest" in t.lower(), "the refusal")
    assert "not offered" in message, message
    nearest = [button.text for button in phone.all(".setting[data-setting='iso'] .message button.nearest")]
    assert nearest, message
    assert all(value in message for value in nearest)
    assert daemon.setting("iso") != "12345"
    phone.all(".setting[data-setting='iso'] .message button.nearest")[0].click()
    phone.wait(lambda b: daemon.setting("iso") == nearest[0], f"the nearest choice {nearest[0]} to be set")


def test_a_viewer_watches_and_cannot_change_anything(daemon, fresh_browser):
    viewer = fresh_browser()
    viewer.pair(daemon.url + "/", daemon.code("viewer"))
    banner = viewer.find("#access-banner")
    assert banner.text.startswith("Viewer:")
    assert "viewer role" in banner.get_attribute("title")
    assert not viewer.find("#trigger").is_enabled()
    assert viewer.find("#trigger").get_attribute("title") == banner.get_attribute("title")
    viewer.view("settings")
    viewer.wait(lambda b: b.all(".setting[data-setting='iso'] button[data-raw]"), "the ISO picker")
    assert not any(option.is_enabled() for option in viewer.all(".setting button[data-raw]"))
    viewer.view("timelapse")
    assert not viewer.find("#plan-start").is_enabled()
    # The daemon refuses it too: the page's controls are a courtesy, the role is the daemon's.
    answer = viewer.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch('/v1/cameras/demo/settings/iso', {method: 'PUT', headers: {'Unleashed-Web': '1', 'Content-Type': 'application/json'},
              body: JSON.stringify({value: '200'})}).then(r => r.json().then(b => done([r.status, b.error.message])));
    """)
    assert answer[0] == 403 and "viewer role" in answer[1], answer
    # What the viewer watches is live.
    status, shot = daemon.request("POST", "/v1/cameras/demo/shoot")
    viewer.view("photo")
    viewer.wait_text("#shot-counter", lambda t: t == f"#{shot['counter']}", "a shot, watched")


def test_the_page_reads_durations_and_times_as_the_daemon_does(daemon, phone):
    """The cases the daemon's own tests hold readDuration and TimeOfDay to (DurationTextTests),
    run through the page's parser in the browser: a text the CLI takes, the page takes alike."""
    fixture = os.path.join(os.path.dirname(__file__), "..", "Fixtures", "text-grammar.json")
    with open(fixture) as file:
        cases = json.load(file)
    read = phone.driver.execute_script("""
        const grammar = window.unleashedGrammar;
        const show = (value) => Number.isNaN(value) ? null : value === Infinity ? "tooLong" : value;
        return {
            durations: arguments[0].map(([text]) => show(grammar.parseDuration(text))),
            timesOfDay: arguments[1].map(([text]) => grammar.parseTimeOfDay(text)),
        };""", cases["durations"], cases["timesOfDay"])
    for kind in ("durations", "timesOfDay"):
        wrong = [(text, expected, got) for (text, expected), got in zip(cases[kind], read[kind]) if got != expected]
        assert not wrong, f"{kind} the page reads otherwise than the daemon (text, daemon, page): {wrong}"
    assert len(read["durations"]) == len(cases["durations"]) > 40


def test_codes_and_browsers_from_the_command_line(daemon, fresh_browser):
    """`unleashed web code`, `clients` and `revoke` through the daemon, as the person at the Pi uses them."""
    environment = dict(os.environ, UNLEASHED_SOCKET=daemon.socket)

    def unleashed(*arguments):
        done = subprocess.run([BINARY, *arguments], capture_output=True, text=True, env=environment, timeout=30)
        assert done.returncode == 0, (arguments, done.returncode, done.stderr)
        return done.stdout

    made = json.loads(unleashed("--json", "web", "code", "--role", "viewer"))
    assert made["role"] == "viewer" and re.fullmatch(r"\d{6}", made["code"]) and made["url"].endswith(f"#code={made['code']}")
    assert re.match(r"Pairing code: \d{3} \d{3} \(viewer\), valid until ", unleashed("web", "code", "--role", "viewer"))
    browser = fresh_browser()
    browser.pair(daemon.url + "/", made["code"])
    clients = json.loads(unleashed("--json", "web", "clients"))["clients"]
    mine = [client for client in clients if client["role"] == "viewer" and client["name"] == "Chrome on Linux"]
    assert mine, clients
    assert mine[-1]["id"] in unleashed("web", "clients")
    # Revoked, the open page is sent back to pairing at once, not at its next request.
    assert f"Revoked {mine[-1]['id']}" in unleashed("web", "revoke", mine[-1]["id"])
    browser.wait(lambda b: b.find("#pairing").is_displayed(), "the revoked page back at pairing", timeout=10)
    assert "no longer paired" in browser.text("#pair-error")
    refused = subprocess.run([BINARY, "web", "revoke", mine[-1]["id"]], capture_output=True, text=True, env=environment, timeout=30)
    assert refused.returncode != 0 and "no browser" in refused.stderr, refused.stderr


def test_the_locked_mode_lets_an_operator_shoot_and_change_nothing(fresh_browser):
    locked = Daemon(locked=True)
    try:
        browser = fresh_browser()
        browser.pair(locked.url + "/", locked.logged_code())
        banner = browser.find("#access-banner")
        assert banner.text.startswith("Locked:")
        assert "daemon.locked" in banner.get_attribute("title")
        browser.view("settings")
        browser.wait(lambda b: b.all(".setting[data-setting='iso'] button[data-raw]"), "the ISO picker")
        assert not any(option.is_enabled() for option in browser.all(".setting button[data-raw]"))
        browser.view("timelapse")
        assert not browser.find("#plan-start").is_enabled()
        assert browser.find("#plan-start").get_attribute("title") == banner.get_attribute("title")
        browser.view("photo")
        assert browser.find("#trigger").is_enabled()
        browser.click("#trigger")
        browser.wait_text("#shot-counter", lambda t: t == f"#{locked.camera()['shotCounter']}" and t != "–", "the shot")
        # A bulb is a shot too: without jobs it goes straight to the camera, which answers for itself.
        browser.click("#photo-bulb")
        browser.click("#trigger")
        refusal = browser.wait_text("#photo-message", lambda t: "bulb" in t.lower(), "the camera's own answer to a bulb")
        assert "locked" not in refusal, refusal
    finally:
        locked.stop()


def test_a_reload_during_a_run_catches_up_and_disturbs_nothing(daemon, phone):
    job = start_timelapse(phone, "0.5s", frames=16)
    phone.wait_text("#run-frame", lambda t: frame_number(t) >= 4, "four frames")
    phone.driver.refresh()
    phone.wait(lambda b: b.find("#app").is_displayed(), "the app after the reload")
    phone.view("timelapse")
    caught_up = phone.wait_text("#run-frame", lambda t: frame_number(t) >= 4, "the run caught up from the snapshot")
    assert caught_up.endswith("of 16")
    phone.wait(lambda b: len(b.all("#run-frames li")) >= 4, "the last frames listed again")
    phone.wait_text("#run-state", lambda t: t.startswith("finished"), "the run's end", timeout=30)
    document = daemon.job(job)
    summary = document["summary"]
    assert (summary["taken"], summary.get("failed", 0), summary.get("skipped", 0)) == (16, 0, 0), summary
    # Closing the page changes nothing either: a run goes on with nobody watching.
    job = start_timelapse(phone, "0.5s", frames=6)
    phone.open("about:blank")
    wait_until(lambda: daemon.job(job)["state"] == "finished", timeout=20, every=0.2)
    assert daemon.job(job)["summary"]["taken"] == 6
    phone.open(daemon.url + "/")
    phone.wait(lambda b: b.find("#app").is_displayed(), "the app again")


def test_the_page_never_polls(daemon, phone):
    phone.view("photo")
    phone.wait_text("#connection-text", lambda t: t == "Ready", "the live stream")
    before = phone.driver.execute_script("return performance.getEntriesByType('resource').length")
    job = start_timelapse(phone, "0.5s", frames=8)
    count_after_start = phone.driver.execute_script("return performance.getEntriesByType('resource').length")
    phone.wait_text("#run-state", lambda t: t.startswith("finished"), "the run's end", timeout=30)
    after = phone.driver.execute_script("return performance.getEntriesByType('resource').length")
    # Starting the run is one request; eight frames and the end arrive on the open stream.
    assert after == count_after_start, f"{after - count_after_start} requests while the run went on"
    assert count_after_start - before == 1
    assert daemon.job(job)["summary"]["taken"] == 8


def test_a_restarted_daemon_is_shown_lost_and_the_page_comes_back(fresh_browser):
    """A daemon that restarts (as a phone that loses the network) shows as unreachable, then live
    again by itself, still paired, with what happened meanwhile."""
    restarting = Daemon(port=free_port())
    try:
        browser = fresh_browser()
        browser.pair(restarting.url + "/", restarting.logged_code())
        restarting.halt()
        browser.wait_text("#connection-text", lambda t: "Reconnecting" in t, "the lost daemon to show")
        assert browser.find("#connection").get_attribute("data-state") == "lost"
        restarting.start()
        status, shot = restarting.request("POST", "/v1/cameras/demo/shoot")
        assert status == 200
        browser.wait_text("#connection-text", lambda t: t == "Ready", "the page to reconnect by itself", timeout=30)
        assert browser.find("#app").is_displayed(), "still paired: the browser was kept across the restart"
    finally:
        restarting.stop()


def test_fits_a_phone_and_a_tablet_with_touch_targets_of_44_px(daemon, phone):
    for size in (PHONE, TABLET):
        phone.resize(size)
        for view in ("photo", "timelapse", "video", "settings", "cameras", "jobs", "app"):
            phone.view(view)
            width = phone.driver.execute_script("return document.documentElement.scrollWidth")
            assert width <= size[0], f"{view} at {size} is {width} px wide"
            small = phone.driver.execute_script("""
                return [...document.querySelectorAll('button, input, select, a')].filter(e => {
                    const r = e.getBoundingClientRect();
                    return e.offsetParent !== null && r.width > 0 && (r.width < 44 || r.height < 44) && !e.classList.contains('skip');
                }).map(e => (e.id || e.textContent.trim() || e.outerHTML.slice(0, 60)) + ' ' + Math.round(e.getBoundingClientRect().width) + 'x' + Math.round(e.getBoundingClientRect().height));
            """)
            assert not small, f"touch targets under 44 px in {view} at {size}: {small}"
            unnamed = phone.driver.execute_script("""
                return [...document.querySelectorAll('button, input, select')].filter(e => e.offsetParent !== null &&
                    !(e.getAttribute('aria-label') || e.textContent.trim() || (e.labels && e.labels.length) || e.title))
                    .map(e => e.outerHTML.slice(0, 80));
            """)
            assert not unnamed, f"controls without an accessible name in {view}: {unnamed}"
    phone.resize(PHONE)
    phone.view("photo")


def test_night_mode_is_red_on_black(daemon, phone):
    phone.view("app")
    phone.click("#theme [data-value='night']")
    colours = phone.driver.execute_script("""
        const style = getComputedStyle(document.body);
        return [style.backgroundColor, style.color];
    """)
    assert colours[0] == "rgb(0, 0, 0)"
    red, green, blue = map(int, re.findall(r"\d+", colours[1])[:3])
    assert red > 150 and green < 60 and blue < 60, colours
    # The choice is this browser's, kept across a reload.
    phone.driver.refresh()
    phone.wait(lambda b: b.find("#app").is_displayed(), "the app after a reload")
    assert phone.driver.execute_script("return document.documentElement.dataset.theme") == "night"
    phone.view("app")
    phone.click("#theme [data-value='dark']")


def test_screenshots_of_each_mode(daemon, phone, fresh_browser):
    """The pictures in docs/ and the README: made here, at phone size upright and sideways, from a
    real run, in the dark theme and the night one."""
    pairing = fresh_browser()
    pairing.open(daemon.url + "/")
    pairing.wait(lambda b: b.find("#pairing").is_displayed(), "the pairing view")
    shots = {pairing.screenshot("pairing"): PHONE}
    phone.view("photo")
    phone.click("#trigger")
    phone.wait_text("#shot-counter", lambda t: t != "–", "a shot")
    job = start_timelapse(phone, "1s", frames=60)
    phone.wait_text("#run-frame", lambda t: frame_number(t) >= 4, "a few frames")
    sideways = (PHONE[1], PHONE[0])
    for size, prefix in ((PHONE, ""), (sideways, "landscape-")):
        phone.resize(size)
        for view, name in (("photo", "photo"), ("timelapse", "intervalometer"), ("video", "video"), ("settings", "settings"),
                           ("jobs", "jobs"), ("app", "browser")):
            phone.view(view)
            if view == "settings":
                phone.wait(lambda b: b.all(".setting button[data-raw]"), "the pickers")
            phone.driver.execute_script("window.scrollTo(0, 0)")
            shots[phone.screenshot(prefix + name)] = size
        phone.view("app")
        phone.click("#theme [data-value='night']")
        phone.view("timelapse")
        phone.driver.execute_script("window.scrollTo(0, 0)")
        shots[phone.screenshot(prefix + "night")] = size
        phone.view("app")
        phone.click("#theme [data-value='dark']")
    phone.resize(PHONE)
    phone.view("timelapse")
    phone.click("#run-stop")
    phone.click("#run-stop")  # Stop asks for a second tap
    phone.wait_text("#run-state", lambda t: t.startswith("finished"), "the run stopped")
    for path, size in shots.items():
        with open(path, "rb") as file:
            header = file.read(24)
        assert header[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
        assert (width, height) == (size[0] * 2, size[1] * 2), (path, width, height)


def jpeg_size(data):
    """A JPEG's width and height, from its frame header."""
    assert data[:2] == b"\xff\xd8", "not a JPEG"
    index = 2
    while index < len(data):
        marker, length = data[index + 1], int.from_bytes(data[index + 2:index + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):
            return int.from_bytes(data[index + 7:index + 9], "big"), int.from_bytes(data[index + 5:index + 7], "big")
        index += 2 + length
    raise AssertionError("no frame header")


def test_pictures_a_camera_saves_show_as_thumbnails(fresh_browser):
    """A camera on PTP/IP through libgphoto2, its pictures copied to the daemon's disk: each shot
    appears in the Jobs view as a thumbnail the daemon makes from the saved JPEG."""
    camera = TetheredCamera()
    tethered = Daemon(tethered=camera)
    try:
        browser = fresh_browser()
        browser.pair(tethered.url + "/", tethered.logged_code())
        name = tethered.get("/v1/status")["cameras"][0]["name"]
        browser.view("jobs")
        browser.view("photo")
        browser.click("#trigger")
        browser.wait_text("#shot-counter", lambda t: t != "–", "the shot")
        # Photo shows the picture and its histogram, drawn from the thumbnail's pixels.
        histogram = browser.wait(lambda b: b.driver.execute_script("""
            const canvas = document.querySelector('#photo-picture canvas');
            return document.getElementById('photo-picture').offsetParent !== null && canvas.dataset.pixels > 0 && canvas.getAttribute('aria-label');
        """), "the last picture's histogram in Photo", timeout=30)
        assert re.match(r"Histogram: \d+ % black, \d+ % white, mean brightness \d+ %", histogram), histogram
        browser.view("jobs")
        image = browser.wait(lambda b: next((i for i in b.all("#thumbs img") if b.driver.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth", i)), None), "a thumbnail drawn", timeout=30)
        listed = tethered.get(f"/v1/cameras/{name}/pictures")["pictures"]
        assert len(listed) == 1 and listed[0]["name"] in image.get_attribute("alt")
        saved = os.path.join(tethered.pictures, listed[0]["name"])
        assert os.path.getsize(saved) == listed[0]["bytes"]
        status, _ = tethered.request("GET", f"/v1/cameras/{name}/pictures/..%2Funleashed.toml/thumbnail")
        assert status == 404, "only the pictures the camera saved are served, never another file"
        connection = UnixHTTPConnection(tethered.socket)
        connection.request("GET", f"/v1/cameras/{name}/pictures/{listed[0]['name']}/thumbnail")
        answer = connection.getresponse()
        thumbnail = answer.read()
        connection.close()
        assert answer.status == 200 and answer.getheader("Content-Type") == "image/jpeg"
        with open(saved, "rb") as file:
            original = jpeg_size(file.read())
        width, height = jpeg_size(thumbnail)
        assert width <= max(original[0], 640) and abs(width / height - original[0] / original[1]) < 0.05, (width, height, original)
        # After a reload the pictures come from the daemon's list, not from the events seen.
        browser.driver.refresh()
        browser.wait(lambda b: b.find("#app").is_displayed(), "the app again")
        browser.view("jobs")
        browser.wait(lambda b: len(b.all("#thumbs img")) == 1, "the saved picture listed after a reload")
        # A running time-lapse shows its newest picture beside the clock, frame by frame.
        status, job = tethered.request("POST", "/v1/jobs", {"camera": name, "plan": {"intervalMs": 1500, "frames": 3}})
        assert status == 201, job
        browser.view("timelapse")
        browser.wait(lambda b: "frame 3" in b.text("#run-picture figcaption") and b.driver.execute_script(
            "return document.querySelector('#run-picture canvas').dataset.pixels > 0"), "frame 3's picture and histogram in the run", timeout=40)
    finally:
        tethered.stop()
        camera.stop()


def fleet(daemon, *arguments):
    """`unleashed fleet ...` with the daemon's configuration (its broker), as a host of the rig runs it."""
    done = subprocess.run([BINARY, "fleet", *arguments, "--config", daemon.config, "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"fleet {' '.join(arguments)}: exit {done.returncode}: {done.stdout}{done.stderr}"
    return json.loads(done.stdout)


def test_the_rig_view_shows_every_host_slot_by_slot(fresh_browser):
    """Two daemons on one MQTT broker (mosquitto, started here): the rig view of one shows both
    hosts online, a fleet time-lapse's slots on each as they come, where the rig stands, and the
    fleet stopped from the command line. Each host's journal is read to check what the page shows."""
    broker = Broker()
    hosts = []
    try:
        for node in ("north", "south"):
            hosts.append(Daemon(extra=f'\n[mqtt]\nbroker = "mqtt://127.0.0.1:{broker.port}"\nnode = "{node}"\ndiscovery = false\n'))
        north, south = hosts
        browser = fresh_browser()
        browser.pair(north.url + "/", north.code("viewer"))
        browser.view("rig")
        browser.wait(lambda b: len(b.all("#rig-hosts [data-node]")) == 2, "both hosts in the rig view")
        assert "north (this host)" in browser.text("#rig-hosts [data-node='north'] .title")
        browser.wait_text("#rig-summary", lambda t: "2 hosts, 2 online" in t and "no time-lapse running" in t, "both online, nothing running")
        # Each host's card is made once and kept up to date: marked now, it is the same node after
        # the run's many reads of the fleet (a rebuilt list loses focus and a screen reader's place).
        browser.driver.execute_script("for (const node of document.querySelectorAll('#rig-hosts [data-node]')) node.unleashedMark = true")

        answers = fleet(north, "timelapse", "--interval", "500ms", "--frames", "6", "--start", "+1s")
        jobs = {host["node"]: host["job"] for host in answers["hosts"]}
        assert sorted(jobs) == ["north", "south"], answers
        for node in jobs:
            browser.wait(lambda b: len(b.all(f"#rig-hosts [data-node='{node}'] .slots li.taken")) == 6,
                         f"six slots taken on {node}", timeout=30)
        for daemon in hosts:
            node = "north" if daemon is north else "south"
            assert daemon.job(jobs[node])["summary"]["taken"] == 6
            marks = [item.get_attribute("data-slot") for item in browser.all(f"#rig-hosts [data-node='{node}'] .slots li")]
            assert marks == [str(slot) for slot in range(1, 7)], marks
        assert browser.driver.execute_script("return [...document.querySelectorAll('#rig-hosts [data-node]')].map(n => n.unleashedMark === true)") == [True, True], \
            "the hosts' cards were rebuilt while the run went on"
        browser.screenshot("rig")

        answers = fleet(north, "timelapse", "--interval", "500ms", "--start", "+1s")
        endless = {host["node"]: host["job"] for host in answers["hosts"]}
        browser.wait_text("#rig-summary", lambda t: re.search(r"every running host at slot ([3-9]|\d\d)|hosts at slots", t), "the endless runs under way", timeout=30)
        stopped = fleet(north, "stop")
        by_node = {host["node"]: host for host in stopped["hosts"]}
        assert sorted(by_node) == ["north", "south"], stopped
        for node, daemon in (("north", north), ("south", south)):
            assert [job["job"] for job in by_node[node]["stopped"]] == [endless[node]], by_node[node]
            assert daemon.job(endless[node])["state"] == "finished"
        browser.wait_text("#rig-summary", lambda t: "no time-lapse running" in t, "the rig stopped", timeout=20)
        # The only complaint: the page asking for its session before it was paired.
        assert all("/web/session" in line and "401" in line for line in browser.console()), browser.console()
    finally:
        for daemon in hosts:
            daemon.stop()
        broker.stop()
