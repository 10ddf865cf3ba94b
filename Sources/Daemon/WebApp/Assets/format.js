// How numbers read on a small screen: durations, clocks, lateness and stops.

/** Milliseconds as people read them: 250 ms, 2 s, 1 min 30 s, 2 h 5 min. */
export function formatDuration(ms) {
  if (!isFinite(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${+(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60000);
  if (minutes < 60) {
    const seconds = Math.round((ms % 60000) / 1000);
    return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
  }
  const hours = Math.floor(minutes / 60);
  return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
}

/** A clock: 0:07, 12:30, 1:02:03. */
export function formatClock(ms) {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

/** Microseconds of lateness, short enough for a narrow cell: 0.04 ms, 1.3 ms, 250 ms, 1.2 s. */
export function formatLateness(us) {
  if (us === undefined || us === null || !isFinite(us)) return "–";
  const ms = us / 1000;
  if (ms < 0.1) return `${ms.toFixed(2)} ms`;
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The lateness of the last frame and the worst so far, on one line: "0.3 ms, max 1.2 ms". */
export function formatLatenessPair(last, max) {
  if (last === undefined || last === null) return "–";
  return `${formatLateness(last)}, max ${formatLateness(max)}`;
}

/** "+12", "-1 1/3", "+3 5/12", "+0" as a number of stops; null otherwise. */
export function stopsOf(text) {
  if (text === null || text === undefined) return null;
  const match = /^([+-]?)(\d+)?(?:\s*(\d+)\/(\d+))?$/.exec(String(text).trim());
  if (!match || (!match[2] && !match[3]) || (match[4] && Number(match[4]) === 0)) return null;
  const whole = match[2] ? parseInt(match[2], 10) : 0;
  const fraction = match[3] ? parseInt(match[3], 10) / parseInt(match[4], 10) : 0;
  return (match[1] === "-" ? -1 : 1) * (whole + fraction);
}

/** Stops to the nearest third, as photographers write them: "+1 1/3", "−2/3", "0". */
export function formatStops(stops) {
  const thirds = Math.round(stops * 3);
  if (thirds === 0) return "0";
  const sign = thirds < 0 ? "−" : "+";
  const whole = Math.floor(Math.abs(thirds) / 3);
  const rest = Math.abs(thirds) % 3;
  return `${sign}${whole ? whole : ""}${whole && rest ? " " : ""}${rest ? `${rest}/3` : ""}`;
}
