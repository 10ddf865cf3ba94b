// Durations and times of day as people type them. The grammar is the daemon's (UnleashedKit's
// readDuration and TimeOfDay): the same text reads the same on the page as in the CLI, and
// Tests/WebApp/unit holds both to the cases of Tests/Fixtures/text-grammar.json.

const UNITS = [["h", 3600000], ["m", 60000], ["s", 1000], ["ms", 1]];

/**
 * "250ms", "30s", "1m30s", "0.5s", "1,5s", "1h 30m": numbers with units, largest first, each
 * once, a fraction rounded to the millisecond; a bare 0 is zero. Milliseconds, NaN otherwise,
 * Infinity for one written well but too long to count.
 */
export function parseDuration(text) {
  let rest = String(text).toLowerCase().replace(/^ +| +$/g, "");
  if (rest === "0") return 0;
  if (rest === "") return NaN;
  let total = 0;
  let next = 0;
  let overflow = false;
  while (rest.length) {
    const match = /^([0-9]+)(?:[.,]([0-9]*))? *([a-z]*) */.exec(rest);
    if (!match) return NaN;
    const [, whole, fraction, unit] = match;
    if (fraction !== undefined && (fraction.length < 1 || fraction.length > 9)) return NaN;
    const index = UNITS.findIndex(([name]) => name === unit);
    if (index < next) return NaN;
    next = index + 1;
    rest = rest.slice(match[0].length);
    const size = UNITS[index][1];
    if (whole.length > 12) { overflow = true; continue; }
    // The fraction's part exactly, as the daemon counts it: digits × unit ÷ 10^digits, half up.
    const scale = 10 ** (fraction || "").length;
    total += Number(whole) * size + Math.floor((Number(fraction || "0") * size * 2 + scale) / (2 * scale));
  }
  if (overflow || total > 9223372036854775807) return Infinity;
  return total;
}

/**
 * A duration typed in a field that names its unit ("Seconds"): a bare number there is in that
 * unit, so a phone's decimal keypad, which has no letters and on a German phone a comma, can
 * write "0,5"; anything else reads as `parseDuration` reads it.
 */
export function parseFieldDuration(text, unitMs) {
  const bare = /^ *([0-9]{1,9})(?:[.,]([0-9]{1,9}))? *$/.exec(String(text));
  if (!bare) return parseDuration(text);
  return parseDuration(`${bare[1]}${bare[2] === undefined ? "" : `.${bare[2]}`}${UNITS.find(([, size]) => size === unitMs)[0]}`);
}

/** "6:30", "06:30" or "18:30:15" as [hours, minutes, seconds]; null otherwise. */
export function parseTimeOfDay(text) {
  const match = /^([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?$/.exec(String(text));
  if (!match) return null;
  const [hours, minutes, seconds] = [match[1], match[2], match[3] || "0"].map(Number);
  return hours < 24 && minutes < 60 && seconds < 60 ? [hours, minutes, seconds] : null;
}
