// The meter's arithmetic, against the values the daemon's CameraKit gives (ExposureArithmetic.swift).
import { test } from "node:test";
import assert from "node:assert/strict";
import { exposureEV100, fNumber, isoSpeed, meterOffset, shutterSeconds } from "../../../Sources/Daemon/WebApp/Assets/exposure.js";

test("shutter speeds, apertures and ISO read as cameras print them", () => {
  assert.equal(shutterSeconds("1/125"), 1 / 125);
  assert.equal(shutterSeconds("30s"), 30);
  assert.equal(shutterSeconds('30"'), 30);
  assert.equal(shutterSeconds('0"3'), 0.3);
  assert.equal(shutterSeconds("bulb"), null);
  assert.equal(shutterSeconds("1/0"), null);
  assert.equal(fNumber("f/5.6"), 5.6);
  assert.equal(fNumber("F8"), 8);
  assert.equal(fNumber("f/"), null);
  assert.equal(isoSpeed("400"), 400);
  assert.equal(isoSpeed("auto"), null);
});

test("f/16, 1/125 s, ISO 100 is EV 15; f/1, 1 s, ISO 100 is 0; third-stop labels are exact thirds", () => {
  assert.equal(exposureEV100({ shutter: "1/125", aperture: "f/16", iso: "100" }), 15);
  assert.equal(exposureEV100({ shutter: "1s", aperture: "f/1", iso: "100" }), 0);
  // ISO 125 is a third above 100, f/3.2 a third below f/2.8 (3 1/3 stops), 1/160 a third faster than 1/125.
  const ev = exposureEV100({ shutter: "1/160", aperture: "f/3.2", iso: "125" });
  // 3 1/3 (f/3.2) − (−7 1/3) (1/160) − 1/3 (ISO 125)
  assert.ok(Math.abs(ev - (10 + 1 / 3)) < 1e-9, String(ev));
  assert.equal(exposureEV100({ shutter: "bulb", aperture: "f/4", iso: "100", bulbSeconds: 4 }), 4 - 2);
  assert.equal(exposureEV100({ shutter: "bulb", aperture: "f/4", iso: "100" }), null);
  assert.equal(exposureEV100({ shutter: "1/125", aperture: "f/4", iso: "auto" }), null);
});

test("an exposure set for a darker scene than the meter reads is over", () => {
  assert.equal(meterOffset(12, 10), 2);
  assert.equal(meterOffset(10, 12), -2);
  assert.equal(meterOffset(null, 10), null);
  assert.equal(meterOffset(10, null), null);
});
