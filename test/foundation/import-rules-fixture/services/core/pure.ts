export const pure = 1;
