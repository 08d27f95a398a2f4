package queen.gateway.javaclient;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.auth.SaslExtensionsCallback;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerToken;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerTokenCallback;

/**
 * The OAUTHBEARER login callback handler of the driver: hands the Java client
 * a JWT it signs itself (RS256) with the test's key, the one whose public
 * half the broker checks tokens against, so no identity provider is needed.
 * Each call (the first login and every refresh before re-authentication)
 * makes a fresh token.
 *
 * <pre>
 *   sasl.login.callback.handler.class=queen.gateway.javaclient.SignedTokenLoginHandler
 *   sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required
 *       keyFile="/path/key.pem" subject="alice" audience="queen" issuer="https://issuer.test"
 *       keyId="test-signer" lifetimeSeconds="300";
 * </pre>
 *
 * keyFile is an unencrypted PKCS#8 PEM RSA key; audience, issuer and keyId
 * are optional.
 */
public final class SignedTokenLoginHandler implements AuthenticateCallbackHandler {
  private Map<String, ?> options = Map.of();

  @Override
  public void configure(Map<String, ?> configs, String saslMechanism, List<AppConfigurationEntry> jaasConfigEntries) {
    if (jaasConfigEntries.size() != 1) throw new IllegalArgumentException("SignedTokenLoginHandler needs exactly one JAAS login module entry");
    options = jaasConfigEntries.get(0).getOptions();
  }

  @Override
  public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
    for (Callback callback : callbacks) {
      if (callback instanceof OAuthBearerTokenCallback tokenCallback) {
        try {
          tokenCallback.token(newToken());
        } catch (Exception e) {
          tokenCallback.error("invalid_token", "the driver could not sign a token: " + e.getMessage(), null);
        }
      } else if (!(callback instanceof SaslExtensionsCallback)) {
        throw new UnsupportedCallbackException(callback);
      }
    }
  }

  private OAuthBearerToken newToken() throws Exception {
    String subject = option("subject", null);
    if (subject == null) throw new IllegalArgumentException("the JAAS option subject is missing");
    long lifetimeMs = Long.parseLong(option("lifetimeSeconds", "300")) * 1000;
    long now = System.currentTimeMillis();
    StringBuilder header = new StringBuilder("{\"alg\":\"RS256\",\"typ\":\"JWT\"");
    if (option("keyId", null) != null) header.append(",\"kid\":").append(quoted(option("keyId", null)));
    header.append('}');
    StringBuilder claims = new StringBuilder("{\"sub\":").append(quoted(subject));
    claims.append(",\"iat\":").append(now / 1000).append(",\"exp\":").append((now + lifetimeMs) / 1000);
    if (option("audience", null) != null) claims.append(",\"aud\":").append(quoted(option("audience", null)));
    if (option("issuer", null) != null) claims.append(",\"iss\":").append(quoted(option("issuer", null)));
    claims.append('}');
    Base64.Encoder url = Base64.getUrlEncoder().withoutPadding();
    String signingInput = url.encodeToString(header.toString().getBytes(StandardCharsets.UTF_8)) + "." + url.encodeToString(claims.toString().getBytes(StandardCharsets.UTF_8));
    Signature rs256 = Signature.getInstance("SHA256withRSA");
    rs256.initSign(privateKey());
    rs256.update(signingInput.getBytes(StandardCharsets.US_ASCII));
    String jwt = signingInput + "." + url.encodeToString(rs256.sign());
    long expiresAt = (now + lifetimeMs) / 1000 * 1000;
    return new OAuthBearerToken() {
      @Override
      public String value() {
        return jwt;
      }

      @Override
      public Set<String> scope() {
        return Set.of();
      }

      @Override
      public long lifetimeMs() {
        return expiresAt;
      }

      @Override
      public String principalName() {
        return subject;
      }

      @Override
      public Long startTimeMs() {
        return now;
      }
    };
  }

  private PrivateKey privateKey() throws Exception {
    String pem = Files.readString(Path.of(option("keyFile", "")));
    String body = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
    return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(body)));
  }

  private String option(String name, String fallback) {
    Object value = options.get(name);
    return value == null ? fallback : value.toString();
  }

  /** A JSON string; the options are the test's own words, so escaping quotes and backslashes is enough. */
  private static String quoted(String text) {
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  @Override
  public void close() {}
}
