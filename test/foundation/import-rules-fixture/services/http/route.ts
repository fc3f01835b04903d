export const route = '/x';
