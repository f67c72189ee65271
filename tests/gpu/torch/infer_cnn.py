# Inference of the small CNN (cuDNN convolutions, batch norm, pooling) and
# of a transformer block, values bitwise.
from common import *
cnn = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
    torch.nn.Flatten(), torch.nn.Linear(32, 10)).cuda().eval()
blk = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, dropout=0.0,
                                       batch_first=True).cuda().eval()
x = torch.randn(8, 3, 32, 32, device="cuda")
s = torch.randn(4, 16, 128, device="cuda")
with torch.no_grad():
    show("cnn", float(cnn(x).double().sum()).hex())
    show("cnn[0]", [float(v).hex() for v in cnn(x)[0, :4]])
    show("block", float(blk(s).double().sum()).hex())
show("cudnn", (torch.backends.cudnn.is_available(), torch.backends.cudnn.version()))
