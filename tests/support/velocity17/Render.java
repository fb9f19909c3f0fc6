// Renders each template given on standard input with Apache Velocity 1.7 itself, for the test
// that holds the local renderer's whitespace to Java's (tests/unit/velocity/test_whitespace.py).
// Input: one template a line, base64 (UTF-8). Output: one rendered text a line, base64.
// Run with Java's source launcher: java -cp <velocity 1.7 and its dependencies> Render.java
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.velocity.VelocityContext;
import org.apache.velocity.app.VelocityEngine;

public class Render {
  public static void main(String[] args) throws Exception {
    VelocityEngine engine = new VelocityEngine();
    engine.setProperty(
        "runtime.log.logsystem.class", "org.apache.velocity.runtime.log.NullLogChute");
    engine.init();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String template = new String(Base64.getDecoder().decode(line), StandardCharsets.UTF_8);
      StringWriter out = new StringWriter();
      engine.evaluate(new VelocityContext(), out, "case", template);
      byte[] rendered = out.toString().getBytes(StandardCharsets.UTF_8);
      System.out.println(Base64.getEncoder().encodeToString(rendered));
    }
  }
}
