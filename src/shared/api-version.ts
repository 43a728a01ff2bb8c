/** The version of the API contract this build serves (the OpenAPI document's info.version, the MCP server's version). */
export const API_VERSION = '0.8.9';
