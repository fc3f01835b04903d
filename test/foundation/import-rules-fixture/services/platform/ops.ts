export const ops = 'platform operation';
