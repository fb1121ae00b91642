// Service templates the suites render: `TOOL_TEMPLATE` has one obscure variable, `token`, which every
// answer shows as "********" and which is stored encrypted with the rendered spec, for room servers.
export const TOOL_TEMPLATE = `
version: v1
kind: ServiceTemplate
metadata: { name: "{{ name }}" }
variables:
  - name: name
  - name: token
    obscure: true
container:
  image: ghcr.io/example/tool:1
  environment:
    - name: TOKEN
      value: "{{ token }}"
`;
