/** A host on this machine: `localhost`, `127.x.x.x`, `[::1]`. */
export const isLoopbackHost = (hostname: string): boolean => hostname === 'localhost' || /^127(?:\.\d{1,3}){3}$/.test(hostname) || hostname === '[::1]' || hostname === '::1';
