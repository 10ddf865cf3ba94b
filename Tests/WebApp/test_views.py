"""The page's views follow one state: each test here is a defect the first edition of the page
had (a view nobody redrew, a control that forgot the daemon, a layout that ate the screen), shown
in a real chromium at phone size against a demo daemon."""
import re
import time

from harness import PHONE, Daemon, free_port, wait_until

LANDSCAPE = (740, 360)
# The top of the screen: under a fifth of an upright phone, a quarter of one held sideways.
TOP_LIMIT = PHONE[1] / 5 if PHONE[1] > PHONE[0] else PHONE[1] / 4


def start_job(daemon, interval_ms, frames=None, **plan):
    """A time-lapse on the demo camera, started as a script would (the socket), not by the page."""
    body = {"camera": "demo", "plan": {"intervalMs": interval_ms, **({"frames": frames} if frames else {"forever": True}), **plan}}
    status, job = daemon.request("POST", "/v1/jobs", body)
    assert status == 201, job
    return job["id"]


def stop_job(daemon, job):
    daemon.request("POST", f"/v1/jobs/{job}/stop", {"when": "now"})
    assert wait_until(lambda: not daemon.job(job)["live"]), f"job {job} never ended"


def job_rows(browser):
    """The Jobs view's lines as the page shows them, read at once (the list changes as jobs do)."""
    return browser.driver.execute_script("return [...document.querySelectorAll('#job-list li')].map(li => li.innerText)")


def taken_in_jobs_view(browser, job):
    for text in job_rows(browser):
        if text.startswith(f"Job {job} "):
            match = re.search(r"frames: (\d+) taken", text)
            return int(match.group(1)) if match else None
    return None


def test_the_jobs_view_counts_a_run_as_it_goes(daemon, phone):
    phone.view("jobs")
    job = start_job(daemon, 400, frames=12)
    seen = []

    def follow():
        taken = taken_in_jobs_view(phone, job)
        if taken is not None and (not seen or taken != seen[-1]):
            seen.append(taken)
        return not daemon.job(job)["live"] and seen and seen[-1] == 12
    assert wait_until(follow), f"the Jobs view showed {seen} for a run of 12 frames"
    assert len(seen) >= 4, f"the counts should grow while the run goes, saw {seen}"


def picker_offset(browser, setting):
    """How far the selected choice of a picker row is from the row's middle, in its own widths."""
    return browser.driver.execute_script("""
        const picker = document.querySelector(`.setting[data-setting='${arguments[0]}'] .hpicker`);
        const selected = picker.querySelector('[aria-pressed="true"]');
        const row = picker.getBoundingClientRect(), choice = selected.getBoundingClientRect();
        return ((choice.left + choice.width / 2) - (row.left + row.width / 2)) / choice.width;
    """, setting)


def test_a_picker_opens_with_its_value_in_the_middle(daemon, phone):
    status, _ = daemon.request("PUT", "/v1/cameras/demo/settings/shutter-speed", {"value": "1/125"})
    assert status == 200
    phone.view("photo")
    phone.view("settings")
    phone.wait(lambda b: b.all(".setting[data-setting='shutter-speed'] .hpicker [aria-pressed='true']"), "the shutter speed row")
    phone.wait(lambda b: abs(picker_offset(b, "shutter-speed")) <= 0.5, "1/125 in the middle of its row")
    assert phone.text(".setting[data-setting='shutter-speed'] .hpicker [aria-pressed='true']") == "1/125"


def test_a_swipe_that_comes_to_rest_selects_the_value_it_rests_on(daemon, phone):
    status, _ = daemon.request("PUT", "/v1/cameras/demo/settings/iso", {"value": "400"})
    assert status == 200
    phone.view("settings")
    phone.wait(lambda b: b.all(".setting[data-setting='iso'] .hpicker [aria-pressed='true']"), "the ISO row")
    phone.wait(lambda b: abs(picker_offset(b, "iso")) <= 0.5, "ISO 400 in the middle")
    # A swipe, as a finger leaves it: the row scrolls by itself to the fourth choice on and stops.
    wanted = phone.driver.execute_script("""
        const picker = document.querySelector(".setting[data-setting='iso'] .hpicker");
        const choices = [...picker.children];
        const target = choices[choices.findIndex(c => c.getAttribute('aria-pressed') === 'true') + 4];
        picker.scrollTo({ left: target.offsetLeft - (picker.clientWidth - target.offsetWidth) / 2, behavior: 'smooth' });
        return target.textContent;
    """)
    assert wait_until(lambda: daemon.setting("iso") == wanted, timeout=10), f"ISO is {daemon.setting('iso')}, the swipe rested on {wanted}"
    phone.wait_text(".setting[data-setting='iso'] .setting-head strong", lambda t: t == wanted, "the new ISO shown")


def test_a_viewer_on_a_locked_daemon_can_neither_unpair_nor_revoke_nor_shoot(fresh_browser):
    stand = Daemon(locked=True)
    try:
        viewer = fresh_browser()
        viewer.pair(stand.url + "/", stand.code("viewer"))
        assert not viewer.find("#trigger").is_enabled()
        viewer.view("app")
        assert not viewer.find("#logout").is_displayed(), "Unpair is offered on a locked daemon"
        assert "stays paired" in viewer.text("#logout-locked")
        assert not viewer.find("#browsers").is_displayed(), "the browsers' list is offered to a viewer"
        # The daemon refuses it as well: the page only shows what the daemon allows.
        answer = viewer.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/web/logout', {method: 'POST', headers: {'Unleashed-Web': '1'}})
              .then(r => r.json().then(b => done([r.status, b.error.message])));
        """)
        assert answer[0] == 403 and "locked" in answer[1], answer
        shot = viewer.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/v1/cameras/demo/shoot', {method: 'POST', headers: {'Unleashed-Web': '1'}}).then(r => done(r.status));
        """)
        assert shot == 403
        status, clients = stand.request("GET", "/v1/web/clients")
        assert status == 200 and len(clients["clients"]) == 1, "the viewer was unpaired"
        viewer.driver.refresh()
        viewer.wait(lambda b: b.find("#app").is_displayed(), "the viewer still paired after a reload")
    finally:
        stand.stop()


def test_an_operator_hands_out_a_viewer_code_and_revokes_that_browser(daemon, phone, fresh_browser):
    phone.view("app")
    phone.click("#make-viewer-code")
    digits = phone.wait_text("#viewer-code-digits", lambda t: re.fullmatch(r"\d{3} \d{3}", t), "a viewer code")
    friend = fresh_browser()
    friend.pair(daemon.url + "/", digits.replace(" ", ""))
    assert friend.find("#access-banner").text.startswith("Viewer:")
    phone.click("#list-browsers")
    phone.wait(lambda b: len(b.all("#browser-list li")) >= 2, "both browsers listed")
    rows = [item for item in phone.all("#browser-list li") if "viewer" in item.text]
    assert rows, phone.text("#browser-list")
    revoke = rows[-1].find_element("css selector", "button")
    phone.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", revoke)
    revoke.click()
    revoke.click()  # Revoke asks for a second tap
    phone.wait_text("#browsers-message", lambda t: "Revoked" in t, "the revocation")
    # The friend's page hears no more from the daemon and goes back to pairing.
    friend.driver.refresh()
    friend.wait(lambda b: b.find("#pairing").is_displayed(), "the revoked browser sent to pairing")


def test_controls_are_off_while_the_daemon_is_out_of_reach_and_the_backoff_grows_once_a_loss(fresh_browser):
    restarting = Daemon(port=free_port())
    try:
        browser = fresh_browser()
        browser.pair(restarting.url + "/", restarting.logged_code())
        browser.view("app")
        browser.click("#theme [data-value='night']")
        browser.view("photo")
        ready = browser.driver.execute_script("const s = getComputedStyle(document.querySelector('#connection .dot')); return [s.borderRadius, s.transform, s.borderTopWidth]")
        assert browser.find("#trigger").is_enabled()
        restarting.halt()
        browser.wait(lambda b: not b.find("#trigger").is_enabled(), "the trigger off while the daemon is away")
        assert browser.find("#offline-banner").is_displayed()
        assert "out of reach" in browser.find("#trigger").get_attribute("title")
        # In the night theme every state is red: it is told by shape as well.
        lost = browser.driver.execute_script("const s = getComputedStyle(document.querySelector('#connection .dot')); return [s.borderRadius, s.transform, s.borderTopWidth]")
        assert lost != ready, f"ready and lost look the same in the night theme: {ready}"
        # Three tries after the loss: 1 s, 2 s, 4 s (and a fifth more at most, spread).
        browser.wait(lambda b: len(b.driver.execute_script("return window.unleashedState.reconnectDelays || []")) >= 3,
                     "three tries to reconnect", timeout=30)
        delays = browser.driver.execute_script("return window.unleashedState.reconnectDelays")[:3]
        for delay, base in zip(delays, (1000, 2000, 4000)):
            assert base <= delay <= base * 1.2, f"the waits between tries were {delays}"
        restarting.start()
        browser.wait(lambda b: b.find("#trigger").is_enabled(), "the trigger back with the daemon", timeout=30)
        assert not browser.find("#offline-banner").is_displayed()
        browser.view("app")
        browser.click("#theme [data-value='dark']")
    finally:
        restarting.stop()


def test_the_job_detail_takes_up_its_frames_after_the_daemon_restarts(fresh_browser):
    restarting = Daemon(port=free_port())
    try:
        browser = fresh_browser()
        browser.pair(restarting.url + "/", restarting.logged_code())
        job = start_job(restarting, 500)
        browser.view("jobs")
        browser.wait(lambda b: taken_in_jobs_view(b, job) is not None, "the job listed")
        button = [item for item in browser.all("#job-list li") if item.text.startswith(f"Job {job} ")][0].find_element("css selector", "button")
        button.click()
        frames = lambda b: [int(t.text.lstrip("#")) for t in b.all("#job-detail-frames li .clock") if t.text.lstrip("#").isdigit()]
        browser.wait(lambda b: len(frames(b)) >= 2, "frames in the job's detail")
        restarting.halt()
        before = max(frames(browser))
        restarting.start()
        # The daemon takes the suspended run up again; the detail follows it without a tap.
        browser.wait(lambda b: frames(b) and max(frames(b)) >= before + 3, "frames after the restart in the detail", timeout=40)
        stop_job(restarting, job)
    finally:
        restarting.stop()


def chrome_height(browser):
    return browser.driver.execute_script("return document.getElementById('main').getBoundingClientRect().top")


def test_the_top_of_the_screen_is_under_a_fifth_of_it_and_the_stop_button_clear_of_the_tab_bar(daemon, phone, fresh_browser):
    job = start_job(daemon, 2000)
    try:
        phone.view("timelapse")
        phone.wait(lambda b: b.find("#run-chip").is_displayed(), "the running job's chip")
        assert phone.find("#demo-badge").is_displayed()
        phone.driver.execute_script("window.scrollTo(0, 0)")
        assert chrome_height(phone) <= TOP_LIMIT, f"the top takes {chrome_height(phone)} px of {PHONE[1]}"
        assert phone.driver.execute_script("const t = document.getElementById('connection-text'); return t.scrollWidth <= t.clientWidth"), \
            f"the state is cut: {phone.text('#connection-text')}"
        # Stop is where a thumb reaches it without scrolling, and the tab bar does not cover it.
        covered = phone.driver.execute_script("""
            const stop = document.getElementById('run-stop').getBoundingClientRect();
            const hit = document.elementFromPoint(stop.left + stop.width / 2, stop.top + stop.height / 2);
            return [stop.bottom <= innerHeight, hit && hit.id];
        """)
        assert covered == [True, "run-stop"], f"Stop is out of sight or under the tab bar: {covered}"
        phone.wait(lambda b: b.text("#run-lateness") != "–", "the lateness")
        lines = phone.driver.execute_script("const e = document.getElementById('run-lateness'); return e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight)")
        assert lines < 1.5, f"the lateness takes {lines:.1f} lines: {phone.text('#run-lateness')}"
        viewer = fresh_browser()
        viewer.pair(daemon.url + "/", daemon.code("viewer"))
        assert chrome_height(viewer) <= TOP_LIMIT, f"with the viewer's banner the top takes {chrome_height(viewer)} px"
        viewer.resize(LANDSCAPE)
        assert chrome_height(viewer) <= LANDSCAPE[1] / 4, f"in landscape the top takes {chrome_height(viewer)} px of {LANDSCAPE[1]}"
    finally:
        stop_job(daemon, job)


def test_the_connection_is_announced_when_it_changes_not_at_every_shot(daemon, phone):
    phone.view("photo")
    phone.driver.execute_script("""
        window.liveChanges = 0;
        const observer = new MutationObserver((records) => { window.liveChanges += records.length; });
        for (const region of document.querySelectorAll('[aria-live]:not([aria-live="off"]), [role="status"], [role="alert"]')) {
            if (region.closest('#view-photo') && region.id === 'photo-message') continue;
            observer.observe(region, { childList: true, characterData: true, subtree: true });
        }
    """)
    counter = daemon.camera()["shotCounter"]
    for _ in range(4):
        status, shot = daemon.request("POST", "/v1/cameras/demo/shoot")
        assert status == 200
        counter = shot["counter"]
        phone.wait_text("#shot-counter", lambda t, c=counter: t == f"#{c}", "the shot shown")
    assert phone.driver.execute_script("return window.liveChanges") == 0, "a live region spoke during the shots"


def test_the_meter_reads_over_or_under_the_exposure_set_on_a_labelled_scale(daemon, phone):
    for setting, value in (("shutter-speed", "1/125"), ("aperture", "f/8"), ("iso", "100")):
        status, answer = daemon.request("PUT", f"/v1/cameras/demo/settings/{setting}", {"value": value})
        assert status == 200, answer
    phone.view("settings")  # the page reads the settings it compares with
    phone.view("photo")
    metered = daemon.camera()["meteredEV"]
    whole = re.match(r"([+-]?\d+)", metered)
    assert whole and "/" not in metered, f"the demo meter reads {metered}"
    # f/8 at 1/125 s and ISO 100 expose for EV 13 (6 + 7 stops); the meter reads the scene's EV.
    offset = int(whole.group(1)) - 13
    words = "on the meter" if offset == 0 else "over the meter" if offset > 0 else "under the meter"
    expected = "0" if offset == 0 else f"{'+' if offset > 0 else '−'}{abs(offset)}"
    phone.wait_text("#ev-offset", lambda t: t == expected, f"the offset {expected} (meter {metered}, exposure EV 13)")
    assert phone.text("#ev-words") == words
    assert [label.text for label in phone.all(".ev-labels span")] == ["−3", "−2", "−1", "0", "+1", "+2", "+3"]
    assert "EV" not in phone.text("#statusline"), "the meter shows twice"
    status, _ = daemon.request("PUT", "/v1/cameras/demo/settings/shutter-speed", {"value": "1/250"})
    assert status == 200
    moved = offset - 1
    expected = "0" if moved == 0 else f"{'+' if moved > 0 else '−'}{abs(moved)}"
    phone.wait_text("#ev-offset", lambda t: t == expected, "a stop less light: a stop further under")
    daemon.request("PUT", "/v1/cameras/demo/settings/shutter-speed", {"value": "1/125"})


def test_a_decimal_comma_from_a_german_keypad_is_half_a_second(daemon, phone):
    status, _ = daemon.request("PUT", "/v1/cameras/demo/settings/shutter-speed", {"value": "bulb"})
    assert status == 200
    phone.view("photo")
    phone.click("#photo-bulb")
    seconds = phone.find("#bulb-seconds")
    seconds.clear()
    seconds.send_keys("0,5")
    before = {job["id"] for job in daemon.get("/v1/jobs")["jobs"]}
    phone.click("#trigger")
    assert wait_until(lambda: {job["id"] for job in daemon.get("/v1/jobs")["jobs"]} - before), "no bulb job started"
    job = max({job["id"] for job in daemon.get("/v1/jobs")["jobs"]} - before)
    assert daemon.job(job)["plan"]["exposure"] == {"kind": "bulb", "ms": 500}
    assert wait_until(lambda: not daemon.job(job)["live"])
    phone.click("#photo-single")
    daemon.request("PUT", "/v1/cameras/demo/settings/shutter-speed", {"value": "1/125"})


def test_a_ramped_run_shows_its_exposure_now_and_over_its_frames(daemon, phone):
    phone.view("settings")  # the settings the ramp changes, read once and followed by their events
    phone.wait(lambda b: b.all(".setting button[data-raw]"), "the pickers")
    job = start_job(daemon, 600, exposure={"kind": "ramp", "minISO": 100, "maxISO": 6400, "bulbFromMs": None, "gapMs": 100})
    try:
        phone.view("timelapse")
        phone.wait_text("#run-ramp-exposure", lambda t: t.startswith("Now ISO "), "the ramp's exposure now")
        phone.wait(lambda b: len(b.find("#run-ramp-line").get_attribute("points").split()) >= 3, "three frames on the ramp's graph", timeout=30)
        assert re.match(r"Exposure wanted, EV at ISO 100: -?\d+\.\d to -?\d+\.\d over \d+ frames", phone.text("#run-ramp-scale")), phone.text("#run-ramp-scale")
    finally:
        stop_job(daemon, job)


def test_an_interrupted_run_is_resumed_and_any_run_exported_as_csv_from_the_jobs_view(fresh_browser):
    # A daemon told not to resume by itself keeps an interrupted run for a person to take up.
    restarting = Daemon(port=free_port(), extra="resume_runs = false\n")
    try:
        browser = fresh_browser()
        browser.pair(restarting.url + "/", restarting.logged_code())
        job = start_job(restarting, 500)
        assert wait_until(lambda: restarting.job(job)["summary"]["taken"] >= 2)
        restarting.halt()
        restarting.start()
        assert restarting.job(job)["state"] == "suspended" and restarting.job(job)["resumable"], restarting.job(job)
        browser.wait_text("#connection-text", lambda t: t == "Ready", "the page back with the daemon", timeout=30)
        browser.view("jobs")
        row = lambda b: next((item for item in b.all("#job-list li") if item.text.startswith(f"Job {job} ")), None)
        row_text = lambda b: next((text for text in job_rows(b) if text.startswith(f"Job {job} ")), "")
        browser.wait(lambda b: "suspended" in row_text(b), "the interrupted job listed")
        taken = restarting.job(job)["summary"]["taken"]
        resume = row(browser).find_element("css selector", "button.primary")
        assert resume.text == "Resume" and resume.is_displayed()
        browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", resume)
        resume.click()
        assert wait_until(lambda: restarting.job(job)["live"] and restarting.job(job)["summary"]["taken"] >= taken + 2), restarting.job(job)
        browser.wait(lambda b: (taken_in_jobs_view(b, job) or 0) >= taken + 2, "the resumed run's counts growing in the Jobs view")
        stop_job(restarting, job)
        link = row(browser).find_element("css selector", "a[download]")
        assert link.get_attribute("download") == f"unleashed-run-{job}.csv"
        answer = browser.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(arguments[0]).then(r => r.text().then(t => done([r.status, r.headers.get('Content-Type'), t])));
        """, link.get_attribute("href"))
        assert answer[0] == 200 and answer[1].startswith("text/csv"), answer[:2]
        lines = answer[2].strip().splitlines()
        assert lines[0].startswith("frame,") and len(lines) - 1 == restarting.job(job)["summary"]["taken"] + restarting.job(job)["summary"]["skipped"] + restarting.job(job)["summary"]["failed"], lines[:3]
    finally:
        restarting.stop()


def test_a_first_visit_says_what_this_browser_may_do_picks_a_camera_and_tells_of_demo_mode(daemon, fresh_browser):
    browser = fresh_browser()
    browser.open(daemon.url + "/")
    browser.wait(lambda b: b.find("#pairing").is_displayed(), "the pairing view")
    browser.find("#pair-code").send_keys(daemon.code("operator"))
    browser.click("#pair-submit")
    browser.wait(lambda b: b.find("#onboarding").is_displayed(), "the first visit's steps")
    assert browser.text("#onboarding-title") == "Paired" and "operator" in browser.text("#onboarding-text")
    assert not browser.find("#trigger").is_displayed() or browser.driver.execute_script("return document.getElementById('main').inert")
    browser.click("#onboarding-next")
    browser.wait_text("#onboarding-title", lambda t: t == "Pick a camera", "the camera step")
    browser.click("#onboarding-cameras button")
    assert browser.find("#onboarding-cameras button").get_attribute("aria-pressed") == "true"
    browser.click("#onboarding-next")
    browser.wait_text("#onboarding-title", lambda t: t == "Demo mode", "the demo step")
    assert "simulated" in browser.text("#onboarding-text")
    browser.click("#onboarding-next")
    browser.wait(lambda b: not b.find("#onboarding").is_displayed(), "the steps done")
    browser.driver.refresh()
    browser.wait(lambda b: b.find("#app").is_displayed(), "the app after a reload")
    assert not browser.find("#onboarding").is_displayed(), "a first visit is shown once"


def test_every_mode_has_a_landscape_layout_with_its_main_control_in_reach(daemon, fresh_browser):
    from test_accessibility import serious_violations
    browser = fresh_browser(LANDSCAPE)
    browser.pair(daemon.url + "/", daemon.code("operator"))
    job = start_job(daemon, 2000)
    problems = []
    try:
        for view, control in (("photo", "#trigger"), ("timelapse", "#run-stop"), ("video", "#record"), ("settings", None),
                              ("cameras", None), ("rig", None), ("jobs", None), ("app", "#logout")):
            browser.view(view)
            if view == "settings":
                browser.wait(lambda b: b.all(".setting button[data-raw]"), "the pickers")
            browser.driver.execute_script("window.scrollTo(0, 0)")
            width = browser.driver.execute_script("return document.documentElement.scrollWidth")
            if width > LANDSCAPE[0]:
                problems.append(f"{view} is {width} px wide")
            if chrome_height(browser) > LANDSCAPE[1] / 4:
                problems.append(f"{view}: the top takes {chrome_height(browser)} px")
            if control and view != "app":
                hit = browser.driver.execute_script("""
                    const node = document.querySelector(arguments[0]), box = node.getBoundingClientRect();
                    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
                    return box.bottom <= innerHeight && hit && (hit === node || node.contains(hit));
                """, control)
                if not hit:
                    problems.append(f"{view}: {control} is out of reach without scrolling, or covered")
            small = browser.driver.execute_script("""
                return [...document.querySelectorAll('button, input, select, a')].filter(e => {
                    const r = e.getBoundingClientRect();
                    return e.offsetParent !== null && r.width > 0 && (r.width < 44 || r.height < 44) && !e.classList.contains('skip');
                }).map(e => (e.id || e.textContent.trim()) + ' ' + Math.round(e.getBoundingClientRect().width) + 'x' + Math.round(e.getBoundingClientRect().height));
            """)
            if small:
                problems.append(f"{view}: touch targets under 44 px: {small}")
            problems += serious_violations(browser, f"{view} in landscape")
    finally:
        stop_job(daemon, job)
    assert not problems, "\n".join(problems)
