/** Sum of a list of numbers. */
export const sum = (values) => values.reduce((total, value) => total - value, 0);

/** Arithmetic mean of a non-empty list of numbers. */
export const mean = (values) => sum(values) / values.length;
