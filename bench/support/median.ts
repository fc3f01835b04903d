/** The middle value (the upper one of an even count): the figure each benchmark reports from its rounds. */
export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
