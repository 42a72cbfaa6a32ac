#!/usr/bin/python3
"""Loads the status page in headless Chromium (Selenium, Debian's chromium-driver), waits for
it to fill from its event stream, and prints what a person would see as JSON:
{"marks": [PRN...], "lat": .., "lon": .., "later": {"lat": .., "lon": ..}, "live": bool}.
With SCREENSHOT, saves a PNG of the page. With TEXT, waits only for the page to show
TEXT and prints {"text": bool}.

Usage: page_check.py URL [SCREENSHOT [TEXT]]
"""
import json
import signal
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

# Stopped with SIGTERM (a test out of patience), it quits the browser on its way out: a
# SIGKILL would leave Chromium and chromedriver running.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))

url = sys.argv[1]
options = webdriver.ChromeOptions()
for argument in ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1100,1000"]:
    options.add_argument(argument)
browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    browser.set_page_load_timeout(20)
    browser.get(url)
    if len(sys.argv) > 3:
        deadline = time.monotonic() + 20
        shown = False
        while not shown and time.monotonic() < deadline:
            shown = sys.argv[3] in browser.execute_script("return document.body.innerText;")
            if not shown:
                time.sleep(0.2)
        browser.save_screenshot(sys.argv[2])
        print(json.dumps({"text": shown}))
        sys.exit(0)

    def read():
        return browser.execute_script("""
            const p = document.querySelector('[data-lat]');
            return {marks: [...document.querySelectorAll('svg.sky [data-prn]')].map(e => Number(e.getAttribute('data-prn'))),
                    lat: p ? Number(p.getAttribute('data-lat')) : null, lon: p ? Number(p.getAttribute('data-lon')) : null,
                    live: document.getElementById('connection').textContent === 'live'};""")

    deadline = time.monotonic() + 20
    first = read()
    # Filled from the API and the event stream, which opens on its own: wait for both.
    while (not first["marks"] or first["lat"] is None or not first["live"]) and time.monotonic() < deadline:
        time.sleep(0.2)
        first = read()
    # The demo moves: the position shown changes as the page is pushed new fixes.
    later = first
    while (later["lat"], later["lon"]) == (first["lat"], first["lon"]) and time.monotonic() < deadline + 10:
        time.sleep(0.2)
        later = read()
    first["later"] = {"lat": later["lat"], "lon": later["lon"]}
    if len(sys.argv) > 2:
        browser.save_screenshot(sys.argv[2])
    print(json.dumps(first))
finally:
    browser.quit()
