// A label function written the way kpt's TypeScript SDK documents it (npm `kpt-functions`, which
// reads and writes the ResourceList with js-yaml, a YAML 1.2 library): it adds every key=value of
// its ConfigMap functionConfig as a label on every item. Plain JavaScript over the SDK's compiled
// package, so no TypeScript build is needed; fnrun's tests run it as `node label.js`.
'use strict';
const { run, addLabel } = require('kpt-functions');

async function label(configs) {
  const labels = configs.getFunctionConfigMap() || new Map();
  for (const object of configs.getAll()) {
    object.metadata = object.metadata || {};
    for (const [key, value] of labels) {
      addLabel(object, key, value);
    }
  }
}

label.usage = 'Adds each key=value of the ConfigMap functionConfig as a label on every resource.';

run(label);
