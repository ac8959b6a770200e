"""Drives the operator console (/console) in headless Chromium with selenium, the way an operator's browser does.

Usage: python3 console_browser.py BASE_URL EXPECTATIONS_JSON ARTIFACT_DIR

EXPECTATIONS_JSON names what the server holds: operator_email, operator_password, user_email, user_id,
user_access_token (an app user's bearer JWT), anon_key, service_role_key, space_id, space_name, collection, record_id,
record_title, device_id, device_name. Needs selenium 4 (PyPI) and Debian's chromium and chromium-driver
(/usr/bin/chromium, /usr/bin/chromedriver); selenium-manager is never asked to download anything.

Checks that /console/api refuses everything but an operator's session (no cookie, an app user's token, the
service-role key); that a deep link signed out shows the sign-in form, refuses a wrong password and, after the right
one, shows the linked page; every page by a full load and several by client-side navigation (nav links, table rows,
the back button), each until main#page[data-loaded="true"][data-page=NAME] (the DOM contract in docs/console.md's
pages); that the activity page draws its charts, the settings page shows no service-role key, the operator log
records the sign-in; that the browser logged no error; and that signing out ends the session. Prints one 'ok STEP'
line per step (and 'time PAGE MS ms' lines, reported, not asserted), saves a screenshot per page and timings.json
into ARTIFACT_DIR, and on the first surprise prints 'FAIL STEP' with what was expected and what the page showed,
saves failure.png and exits 1.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import quote

os.environ["SE_OFFLINE"] = "true"  # before selenium is imported: selenium-manager must never download a driver

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 10  # seconds a page may take to reach data-loaded="true"

base = sys.argv[1].rstrip("/")
with open(sys.argv[2]) as file:
    want = json.load(file)
artifacts = sys.argv[3]
os.makedirs(artifacts, exist_ok=True)

driver = None
timings = {"full_loads": {}, "client_side": {}}

# Installed into every new document (before the page's own scripts; DevTools-injected, so the page's CSP does not
# apply): records, per page name, when main#page first carried data-loaded="true", in the document's own clock.
LOADED_OBSERVER = """
(() => {
  window.__consoleLoaded = {};
  const look = () => {
    const main = document.querySelector('main#page');
    if (main && main.getAttribute('data-loaded') === 'true') {
      const name = main.getAttribute('data-page');
      if (name && !(name in window.__consoleLoaded)) window.__consoleLoaded[name] = performance.now();
    }
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true,
                                                attributeFilter: ['data-loaded', 'data-page']});
})();
"""


# --- helpers -------------------------------------------------------------------------------------------------------

def shot(name):
    """Saves a screenshot NAME.png into the artifact folder (best effort: a failing screenshot fails nothing)."""
    if driver is None:
        return
    try:
        driver.save_screenshot(os.path.join(artifacts, f"{name}.png"))
    except Exception as error:  # noqa: BLE001
        print(f"  (no screenshot {name}.png: {error})", flush=True)


def page_state():
    """[data-page, data-loaded] of main#page, or None when there is no main#page."""
    return driver.execute_script(
        "const m = document.querySelector('main#page');"
        "return m ? [m.getAttribute('data-page'), m.getAttribute('data-loaded')] : null;")


def shown():
    """What the browser shows now, for a failure message."""
    if driver is None:
        return "(no browser)"
    try:
        state = page_state()
        text = driver.execute_script("return document.body ? document.body.innerText : ''") or ""
        errors = driver.execute_script(
            "return [...document.querySelectorAll('main#page .error, #signin-error')].map(e => e.innerText.trim()).filter(t => t)")
        text = " ".join(text.split())
        return (f"url {driver.current_url}, main#page data-page/data-loaded {state}, error texts {errors}, "
                f"body text ({len(text)} chars): {text[:800]!r}")
    except Exception as error:  # noqa: BLE001
        return f"(the page could not be read: {error})"


def fail(step, expected, showed=None):
    """Prints FAIL STEP with what was expected and what the page showed, saves failure.png, exits 1."""
    print(f"FAIL {step}", flush=True)
    print(f"  expected: {expected}", flush=True)
    print(f"  the page showed: {showed if showed is not None else shown()}", flush=True)
    shot("failure")
    sys.exit(1)


def check(condition, step, expected, showed=None):
    if not condition:
        fail(step, expected, showed)
    print(f"ok {step}", flush=True)


def wait_until(probe, seconds=WAIT, every=0.05):
    """Calls probe() until it returns something truthy or `seconds` pass; returns its last answer."""
    deadline = time.monotonic() + seconds
    while True:
        answer = probe()
        if answer or time.monotonic() >= deadline:
            return answer
        time.sleep(every)


def wait_loaded(page, step=None, seconds=WAIT):
    """Waits for main#page[data-page=PAGE][data-loaded="true"]; fails the step otherwise."""
    if not wait_until(lambda: page_state() == [page, "true"], seconds):
        fail(step or f"page {page} loads", f'main#page with data-page="{page}" data-loaded="true" within {seconds} s')


def main_text():
    return driver.find_element(By.CSS_SELECTOR, "main#page").text


def path_now():
    return driver.execute_script("return location.pathname")


def signin_shown():
    return driver.execute_script(
        "const f = document.querySelector('form#signin'), e = document.querySelector('input#signin-email');"
        "return !!(f && e && e.offsetParent !== null && e.getClientRects().length > 0)")


def wait_signin(step):
    if not wait_until(signin_shown):
        fail(step, "the sign-in form (form#signin with a visible input#signin-email) within 10 s")


def sign_in(email, password):
    for selector, value in (("input#signin-email", email), ("input#signin-password", password)):
        field = driver.find_element(By.CSS_SELECTOR, selector)
        field.clear()
        field.send_keys(value)
    driver.find_element(By.CSS_SELECTOR, "button#signin-submit").click()


def link_to(path, within):
    """The first visible link inside `within` (a CSS selector) whose resolved href is BASE + PATH, or None."""
    target = base + path
    for link in driver.find_elements(By.CSS_SELECTOR, f"{within} a[href]"):
        if link.get_property("href") == target and link.is_displayed():
            return link
    return None


def page_fetch(path):
    """GET PATH from inside the page (fetch, credentials same-origin): [status, body]."""
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {credentials: 'same-origin'})"
        "  .then(r => r.text().then(t => done([r.status, t])))"
        "  .catch(e => done([0, String(e)]));", path)


def api_status(path, headers):
    """GET BASE + PATH with urllib (no cookie): (status, body)."""
    request = urllib.request.Request(base + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")
    except OSError as error:
        fail(f"GET {path} answers", "an HTTP answer from the server", f"no answer: {error}")


def error_texts():
    return driver.execute_script(
        "return [...document.querySelectorAll('main#page .error')].map(e => e.innerText.trim()).filter(t => t)")


# --- the checks ----------------------------------------------------------------------------------------------------

# (page name, path, texts main#page must show)
enc = lambda text: quote(str(text), safe="")  # noqa: E731
PAGES = [
    ("overview", "/console", []),
    ("users", "/console/users", [want["user_email"]]),
    ("user", f"/console/users/{enc(want['user_id'])}", [want["user_email"]]),
    ("spaces", "/console/spaces", [want["space_name"]]),
    ("space", f"/console/spaces/{enc(want['space_id'])}", [want["space_name"], want["user_email"]]),
    ("collections", "/console/collections", [want["collection"]]),
    ("collection", f"/console/collections/{enc(want['collection'])}", [want["record_title"]]),
    ("record", f"/console/collections/{enc(want['collection'])}/{enc(want['record_id'])}", [want["record_title"]]),
    ("devices", "/console/devices", [want["device_name"]]),
    ("activity", "/console/activity", []),
    ("storage", "/console/storage", []),
    ("settings", "/console/settings", []),
    ("backups", "/console/backups", []),
    ("log", "/console/log", []),
]
PATHS = {name: path for name, path, _ in PAGES}
TEXTS = {name: texts for name, _, texts in PAGES}
# A page may show an API error in .error only where the server may rightly refuse (backups on PostgreSQL).
MAY_SHOW_ERROR = {"backups"}


def page_checks(name, how):
    """What each page must show once loaded, beyond its name: its texts, no API error, and page-specific checks."""
    text = main_text()
    errors = error_texts()
    if errors and name in MAY_SHOW_ERROR:
        print(f"  note: the {name} page shows an error: {errors}", flush=True)
    elif errors:
        fail(f"{name} page ({how}) shows no API error", "no .error inside main#page")
    missing = [expected for expected in TEXTS[name] if expected not in text]
    if missing:
        fail(f"{name} page ({how}) shows {TEXTS[name]}", f"main#page's text to contain {missing}")
    if name == "activity":
        drawn = driver.execute_script(
            "return [...document.querySelectorAll('main#page svg.chart path.series')]"
            "  .filter(p => (p.getAttribute('d') || '').trim().length > 0).length")
        if drawn < 1:
            fail(f"activity page ({how}): a chart drawn",
                 'at least one svg.chart path.series with a non-empty d attribute inside main#page')
        if not driver.find_elements(By.CSS_SELECTOR, "main#page table#errors"):
            fail(f"activity page ({how}): a table of recent errors", "table#errors inside main#page")
        return f"{drawn} chart lines drawn"
    if name == "settings":
        if not text.strip():
            fail(f"settings page ({how}) shows the configuration", "some text inside main#page")
        if want["service_role_key"] in driver.page_source:
            fail(f"settings page ({how}) hides the service-role key", "the service-role key nowhere in the page",
                 "the page's DOM contains the service-role key")
        return "no service-role key in the page"
    if name == "log":
        if "sign" not in text.lower() and want["operator_email"] not in text:
            fail(f"log page ({how}) shows the sign-in", "main#page to mention 'sign' or the operator's e-mail")
        return "the sign-in is logged"
    return None


def full_load(name):
    """driver.get() of the page's deep link, until loaded; screenshot and timings."""
    path = PATHS[name]
    started = time.perf_counter()
    driver.get(base + path)
    wait_loaded(name, f"{name} page loads by a full load of {path}")
    took_ms = (time.perf_counter() - started) * 1000
    if path_now() != path:
        fail(f"{name} page keeps its URL", f"location.pathname {path}")
    detail = page_checks(name, "full load")
    shot(name)
    navigation = driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "return n ? {response_end_ms: n.responseEnd - n.startTime, dom_content_loaded_ms: n.domContentLoadedEventEnd,"
        "            load_event_end_ms: n.loadEventEnd, transfer_bytes: n.transferSize} : null;") or {}
    in_page = driver.execute_script("return (window.__consoleLoaded || {})[arguments[0]]", name)
    timings["full_loads"][name] = {
        "path": path,
        "get_until_loaded_ms": round(took_ms, 1),
        "in_page_data_loaded_ms": round(in_page, 1) if isinstance(in_page, (int, float)) else None,
        **{key: round(value, 1) if isinstance(value, float) else value for key, value in navigation.items()},
    }
    print(f"ok {name} page by a full load of {path}" + (f" ({detail})" if detail else ""), flush=True)
    print(f"time {name} {took_ms:.0f} ms", flush=True)


def client_side(name, action, how):
    """Runs action() (a click or the back button) and waits for the page by client-side navigation: the document
    must stay the same (a marker set before survives), the URL must become the page's path."""
    path = PATHS[name]
    driver.execute_script(
        "window.__sameDocument = true;"
        # So a page left with data-loaded="true" is not taken for the next one before the app marks it loading.
        "const m = document.querySelector('main#page'); if (m) m.setAttribute('data-loaded', 'navigating');")
    started = time.perf_counter()
    action()
    wait_loaded(name, f"{name} page loads by {how}")
    took_ms = (time.perf_counter() - started) * 1000
    if not driver.execute_script("return window.__sameDocument === true"):
        fail(f"{name} page by {how} is client-side", "the same document (history.pushState/popstate, no page load)",
             f"a new document was loaded; {shown()}")
    if path_now() != path:
        fail(f"{name} page by {how} shows its URL", f"location.pathname {path}")
    detail = page_checks(name, how)
    shot(f"nav-{name}")
    timings["client_side"][f"{name} by {how}"] = {"path": path, "until_loaded_ms": round(took_ms, 1)}
    print(f"ok {name} page by {how}" + (f" ({detail})" if detail else ""), flush=True)
    print(f"time {name} ({how}) {took_ms:.0f} ms", flush=True)


def click_link(name, within, how):
    path = PATHS[name]
    link = wait_until(lambda: link_to(path, within), 2)
    if link is None:
        fail(f"{how} to {path}", f"a visible link (a[href]) to {path} inside {within}")
    client_side(name, link.click, how)


def save_timings():
    with open(os.path.join(artifacts, "timings.json"), "w") as file:
        json.dump(timings, file, indent=2)


def start_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1366,900"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    browser.set_page_load_timeout(60)
    browser.set_script_timeout(30)
    try:
        browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": LOADED_OBSERVER})
    except Exception as error:  # noqa: BLE001  (timings only: the checks do not depend on it)
        print(f"  note: no in-page load timing ({error})", flush=True)
    return browser


def run():
    global driver

    # 1. /console/api answers nobody but an operator's session.
    for who, headers in (
        ("no cookie", {}),
        ("an app user's token", {"Authorization": f"Bearer {want['user_access_token']}", "apikey": want["anon_key"]}),
        ("the service-role key", {"Authorization": f"Bearer {want['service_role_key']}",
                                  "apikey": want["service_role_key"]}),
    ):
        status, body = api_status("/console/api/users", headers)
        check(status == 401 and want["user_email"] not in body, f"GET /console/api/users with {who} is 401",
              "401 without the user's e-mail in the body", f"{status} {body[:300]!r}")

    started = time.perf_counter()
    driver = start_browser()
    version = driver.capabilities.get("browserVersion")
    print(f"ok headless Chromium {version} starts ({(time.perf_counter() - started) * 1000:.0f} ms)", flush=True)

    # 2. A deep link signed out shows the sign-in form; a wrong password is refused there.
    user_path = PATHS["user"]
    driver.get(base + user_path)
    wait_signin(f"a deep link signed out ({user_path}) shows the sign-in form")
    print(f"ok a deep link signed out ({user_path}) shows the sign-in form", flush=True)
    sign_in(want["operator_email"], want["operator_password"] + "-wrong")
    error = wait_until(lambda: driver.execute_script(
        "const e = document.querySelector('#signin-error');"
        "return e && e.getClientRects().length > 0 ? e.innerText.trim() : ''"))
    if not error:
        fail("a wrong password is refused", "a visible, non-empty #signin-error within 10 s")
    check(signin_shown() and path_now() == user_path and page_state() != ["user", "true"],
          f"a wrong password is refused ({error!r})", f"still the sign-in form at {user_path}")
    shot("signin-refused")

    # 3. The right password shows the deep-linked page, URL kept.
    started = time.perf_counter()
    sign_in(want["operator_email"], want["operator_password"])
    wait_loaded("user", "signing in shows the deep-linked user page")
    timings["sign_in_until_loaded_ms"] = round((time.perf_counter() - started) * 1000, 1)
    check(path_now() == user_path, "signing in keeps the deep link's URL", f"location.pathname {user_path}")
    check(want["user_email"] in main_text(), "signing in shows the deep-linked user page with the user's e-mail",
          f"main#page's text to contain {want['user_email']!r}")
    operator = wait_until(lambda: driver.execute_script(
        "const o = document.querySelector('#operator'); return o ? o.innerText : ''"), 2)
    check(want["operator_email"] in (operator or ""), "the operator's e-mail shows in #operator",
          f"#operator to contain {want['operator_email']!r}", f"#operator text {operator!r}")
    shot("signed-in")

    # 4. Every page by a full load of its deep link, then by client-side navigation: nav links, table rows, back.
    for name, _, _ in PAGES:
        full_load(name)
    click_link("users", "nav#nav", "a nav link")
    click_link("user", "main#page", "a table row's link")
    client_side("users", driver.back, "the back button")
    click_link("spaces", "nav#nav", "a nav link")
    click_link("space", "main#page", "a table row's link")
    click_link("activity", "nav#nav", "a nav link")
    click_link("collections", "nav#nav", "a nav link")
    click_link("collection", "main#page", "a table row's link")
    click_link("record", "main#page", "a table row's link")
    click_link("log", "nav#nav", "a nav link")
    driver.get(base + "/console/no-such-page")
    wait_loaded("notfound", "an unknown path under /console/ shows the not-found page")
    print("ok an unknown path under /console/ shows the not-found page", flush=True)
    save_timings()

    # 5. The browser logged no error (but the 401s of /console/api calls while signed out or refused).
    entries = driver.get_log("browser")
    tolerated = [entry for entry in entries if entry.get("level") == "SEVERE"
                 and "status of 401" in entry.get("message", "") and "/console/api/" in entry.get("message", "")]
    severe = [entry for entry in entries if entry.get("level") == "SEVERE" and entry not in tolerated]
    for entry in tolerated:
        print(f"  (tolerated: {entry['message']})", flush=True)
    check(not severe, f"the browser logged no error ({len(entries)} entries, {len(tolerated)} signed-out 401s)",
          "no SEVERE entry in the browser's log", "\n    ".join(
              [f"{len(severe)} SEVERE entries:"] + [f"{entry.get('source')}: {entry.get('message')}" for entry in severe]))

    # 6. Signing out shows the sign-in form and ends the session.
    signout = wait_until(lambda: [element for element in driver.find_elements(By.CSS_SELECTOR, "#signout")
                                  if element.is_displayed()], 2)
    if not signout:
        fail("sign out", "a visible #signout")
    signout[0].click()
    wait_signin("signing out shows the sign-in form")
    shot("signed-out")
    print("ok signing out shows the sign-in form", flush=True)
    status, body = page_fetch("/console/api/users")
    check(status == 401 and want["user_email"] not in body,
          "after signing out, /console/api/users fetched from the page is 401",
          "401 without the user's e-mail in the body", f"{status} {body[:300]!r}")
    print("ok all", flush=True)


if __name__ == "__main__":
    try:
        run()
    except SystemExit:
        raise
    except Exception as error:  # noqa: BLE001  (a selenium or browser error still ends with a FAIL line)
        fail(f"unexpected {type(error).__name__}", "no exception", f"{error}; {shown()}")
    finally:
        if timings["full_loads"]:
            save_timings()  # also after a failure: the pages that loaded
        if driver is not None:
            driver.quit()
