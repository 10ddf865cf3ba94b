// Exposure arithmetic in stops, as the daemon's CameraKit does it (ExposureArithmetic.swift):
// cameras label third-stop values with rounded numbers (1/125, ISO 125, f/3.2) but expose at exact
// thirds, so each value is taken at its nearest third. The page uses it for one thing: how far the
// exposure set on the camera is over or under what the camera's meter reads.

const thirds = (value) => Math.round(value * 3) / 3;

/** "1/125", "30s", `30"`, "0.3s", `0"3`, "2.5", "30" as seconds; null for bulb or auto or junk. */
export function shutterSeconds(text) {
  let value = String(text || "").trim().toLowerCase();
  if (!value || value === "bulb" || value === "b" || value === "auto") return null;
  const fraction = /^(\d+)\/(\d+)$/.exec(value);
  if (fraction) return Number(fraction[2]) > 0 ? Number(fraction[1]) / Number(fraction[2]) : null;
  value = value.replace('"', ".");
  if (value.endsWith(".") || value.endsWith("s")) value = value.slice(0, -1);
  return /^\d+(\.\d+)?$/.test(value) && Number(value) > 0 ? Number(value) : null;
}

/** "f/5.6", "F5.6", "5.6", "8" as an f-number; null otherwise. */
export function fNumber(text) {
  let value = String(text || "").trim().toLowerCase();
  if (value.startsWith("f/")) value = value.slice(2); else if (value.startsWith("f")) value = value.slice(1);
  return /^\d+(\.\d+)?$/.test(value) && Number(value) > 0 ? Number(value) : null;
}

/** "400", "ISO 400" as a speed; null for auto or junk. */
export function isoSpeed(text) {
  const value = String(text || "").trim().toLowerCase().replace(/^iso\s*/, "");
  return /^\d+$/.test(value) && Number(value) > 0 ? Number(value) : null;
}

/**
 * The EV at ISO 100 that shutter, aperture and ISO expose for: the scene brightness they render
 * as mid-grey (f/16, 1/125 s, ISO 100 is 15). `bulbSeconds` stands in for a bulb shutter. Null
 * when one is missing or automatic.
 */
export function exposureEV100({ shutter, aperture, iso, bulbSeconds }) {
  const seconds = bulbSeconds > 0 && (shutter === "bulb" || shutter === null || shutter === undefined) ? bulbSeconds : shutterSeconds(shutter);
  const n = fNumber(aperture);
  const speed = isoSpeed(iso);
  if (!seconds || !n || !speed) return null;
  const time = bulbSeconds > 0 && seconds === bulbSeconds ? Math.log2(seconds) : thirds(Math.log2(seconds));
  return thirds(2 * Math.log2(n)) - time - thirds(Math.log2(speed / 100));
}

/**
 * How far the exposure set is over (+) or under (−) the meter, in stops: the meter reads the
 * scene's EV at ISO 100; an exposure set for a darker scene (a lower EV) lets in more light than
 * the meter asks for. Null when either is unknown.
 */
export function meterOffset(meteredEV100, setEV100) {
  if (meteredEV100 === null || meteredEV100 === undefined || setEV100 === null || setEV100 === undefined) return null;
  return meteredEV100 - setEV100;
}
