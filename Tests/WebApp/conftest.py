"""Fixtures of the web app's browser tests: a demo daemon per test module and a phone paired
with it. The harness is harness.py; the assertions live in test_web_app.py."""
import pytest

from harness import PHONE, Browser, Daemon

@pytest.fixture(scope="module")
def daemon():
    running = Daemon()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def phone(daemon):
    """A browser paired as an operator with a code made as `unleashed web code` makes it."""
    browser = Browser()
    browser.pair(daemon.url + "/", daemon.code("operator"))
    yield browser
    browser.quit()


@pytest.fixture
def fresh_browser():
    made = []

    def make(size=PHONE):
        browser = Browser(size)
        made.append(browser)
        return browser

    yield make
    for browser in made:
        browser.quit()
