// The library's codec module, imported by path (its typings cover only the package root).
declare module 'node-zookeeper-client/lib/jute/index.js' {
  const jute: unknown;
  export default jute;
}
