// The clocks and rings: redrawn when a clock's second changes (and a ring at most ten times a
// second, for intervals under ten seconds), while something runs and the page is in sight;
// nothing animates in between, so a phone (or a rig's twenty) draws a few frames a second at most.

export const RING = 339.292; // 2πr of the rings (r = 54)

/** Shows `hidden` of a ring's length hidden. */
export function setRing(node, hidden) {
  const offset = String(RING * Math.min(1, Math.max(0, hidden)));
  if (node.style.strokeDashoffset !== offset) node.style.strokeDashoffset = offset;
}

/** Milliseconds until a clock counting `ms` shows its next second. */
export const untilNextSecond = (ms, counting = "up") =>
  (counting === "up" ? 1000 - (((ms % 1000) + 1000) % 1000) : ((ms % 1000) + 1000) % 1000 || 1000);
