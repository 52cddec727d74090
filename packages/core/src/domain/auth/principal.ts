/** Who is calling: the account a request acts for and the client that holds the token. */
export interface Principal {
  accountId: string;
  clientId: string;
}
