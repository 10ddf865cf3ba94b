"""axe-core (Deque's accessibility engine, from PyPI's selenium-axe-python) on every view of the
page in each theme, in chromium at phone size: no violation of serious or critical impact."""
from selenium_axe_python import Axe

from harness import wait_until

THEMES = ("dark", "night", "light")
VIEWS = ("photo", "timelapse", "video", "settings", "cameras", "rig", "jobs", "app")


def serious_violations(browser, where):
    axe = Axe(browser.driver)
    axe.inject()
    results = axe.run()
    found = [v for v in results["violations"] if v["impact"] in ("serious", "critical")]
    return [f"{where}: {v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:4]}" for v in found]


def test_no_serious_violation_on_any_view_in_any_theme(daemon, phone, fresh_browser):
    pairing = fresh_browser()
    pairing.open(daemon.url + "/")
    pairing.wait(lambda b: b.find("#pairing").is_displayed(), "the pairing view")
    problems = serious_violations(pairing, "pairing")
    # A run under way, so that the time-lapse view shows its ring, counts and controls.
    status, job = daemon.request("POST", "/v1/jobs", {"camera": "demo", "plan": {"intervalMs": 2000, "forever": True}})
    assert status == 201, job
    try:
        for theme in THEMES:
            phone.view("app")
            phone.click(f"#theme [data-value='{theme}']")
            for view in VIEWS:
                phone.view(view)
                if view == "settings":
                    phone.wait(lambda b: b.all(".setting button[data-raw]"), "the pickers")
                problems += serious_violations(phone, f"{view} in {theme}")
        # The plan's form, once the run is stopped.
        daemon.request("POST", f"/v1/jobs/{job['id']}/stop", {"when": "now"})
        assert wait_until(lambda: not daemon.job(job["id"])["live"])
        phone.view("timelapse")
        if phone.find("#run-new").is_displayed():
            phone.click("#run-new")
        for theme in THEMES:
            phone.view("app")
            phone.click(f"#theme [data-value='{theme}']")
            phone.view("timelapse")
            problems += serious_violations(phone, f"the plan's form in {theme}")
    finally:
        daemon.request("POST", f"/v1/jobs/{job['id']}/stop", {"when": "now"})
        phone.view("app")
        phone.click("#theme [data-value='dark']")
    assert not problems, "\n".join(problems)
